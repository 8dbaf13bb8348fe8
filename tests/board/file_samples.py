"""Small files of each kind, made here (no binary fixtures): real pictures from Pillow,
a real WAV from `wave`, and the containers phones send voice notes in, built box by box
with just the parts a sniffer reads (a voice note's codec data is not needed for that)."""

from __future__ import annotations

import io
import struct
import wave
import zlib

from PIL import Image


def picture(fmt: str = "PNG", size: tuple[int, int] = (16, 9)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, (200, 30, 30)).save(out, fmt)
    return out.getvalue()


def png_claiming(width: int, height: int) -> bytes:
    """A valid little PNG whose header claims `width` × `height` pixels: a bomb on paper,
    a few dozen bytes on disk."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return (
            struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
        )

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b""))
        + chunk(b"IEND", b"")
    )


def pdf() -> bytes:
    return b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"


def wav() -> bytes:
    out = io.BytesIO()
    with wave.open(out, "wb") as sound:
        sound.setnchannels(1)
        sound.setsampwidth(2)
        sound.setframerate(8000)
        sound.writeframes(b"\x00\x00" * 800)
    return out.getvalue()


def ogg(*heads: bytes) -> bytes:
    """Ogg beginning-of-stream pages, one per codec head (b"OpusHead...", b"\\x80theora")."""
    pages = b""
    for serial, head in enumerate(
        heads or (b"OpusHead\x01\x01\x38\x01\x80\xbb\x00\x00\x00\x00\x00",)
    ):
        pages += (
            b"OggS\x00\x02"
            + struct.pack("<qIII", 0, serial + 1, 0, 0)
            + bytes([1, len(head)])
            + head
        )
    # A following page that is not a beginning: the walk stops there.
    return pages + b"OggS\x00\x00" + struct.pack("<qIII", 960, 1, 1, 0) + bytes([1, 3]) + b"abc"


def _box(kind: bytes, *children: bytes) -> bytes:
    body = b"".join(children)
    return struct.pack(">I", 8 + len(body)) + kind + body


def mp4(*handlers: bytes, brand: bytes = b"M4A ") -> bytes:
    """An MP4 with one track per handler (b"soun", b"vide")."""
    tracks = [
        _box(b"trak", _box(b"mdia", _box(b"hdlr", b"\x00" * 8 + handler + b"\x00" * 13)))
        for handler in handlers
    ]
    ftyp = _box(b"ftyp", brand + b"\x00\x00\x00\x00" + brand + b"isom")
    return ftyp + _box(b"moov", *tracks) + _box(b"mdat", b"\x00" * 16)


def _element(element: int, body: bytes) -> bytes:
    ident = element.to_bytes((element.bit_length() + 7) // 8, "big")
    size = bytes([0x80 | len(body)]) if len(body) < 127 else (0x4000 | len(body)).to_bytes(2, "big")
    return ident + size + body


def webm(*track_types: int, doc_type: bytes = b"webm") -> bytes:
    """A WebM with one track per type (2: sound, 1: video)."""
    header = _element(0x1A45DFA3, _element(0x4282, doc_type))
    entries = b"".join(_element(0xAE, _element(0x83, bytes([t]))) for t in track_types)
    return header + _element(0x18538067, _element(0x1654AE6B, entries))


def mp3(frames: int = 3) -> bytes:
    """An ID3v2 tag, then MPEG-1 layer III frames (128 kbit/s, 44.1 kHz: 417 bytes each)."""
    tag = b"ID3\x03\x00\x00" + bytes([0, 0, 0, 10]) + b"\x00" * 10
    frame = b"\xff\xfb\x90\x00" + b"\x00" * 413
    return tag + frame * frames


def elf() -> bytes:
    return b"\x7fELF\x02\x01\x01\x00" + b"\x00" * 8 + b"\x02\x00\x3e\x00" + b"\x00" * 100
