"""Media files made in the tests: a real PNG, a decompression bomb, an Ogg/Opus voice note.

Written by hand from the formats' specifications so that no fixture file is trusted
and no encoder has to be installed.
"""

from __future__ import annotations

import struct
import zlib


def png(width: int = 4, height: int = 3, colour: tuple[int, int, int] = (200, 30, 30)) -> bytes:
    """A valid RGB PNG of one colour."""
    row = b"\x00" + bytes(colour) * width
    raw = row * height
    return _png(width, height, zlib.compress(raw))


def png_bomb(width: int = 100_000, height: int = 100_000) -> bytes:
    """A PNG whose header claims width x height pixels; its data is a tiny stream that
    would inflate to gigabytes if anyone decoded it."""
    return _png(width, height, zlib.compress(b"\x00" * 1024))


def _png(width: int, height: int, idat: bytes) -> bytes:
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", idat)
        + _chunk(b"IEND", b"")
    )


def _chunk(kind: bytes, data: bytes) -> bytes:
    crc = zlib.crc32(kind + data) & 0xFFFFFFFF
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)


# --- Ogg/Opus (RFC 3533, RFC 7845) ------------------------------------------------


def _ogg_crc_table() -> list[int]:
    table = []
    for index in range(256):
        crc = index << 24
        for _ in range(8):
            crc = ((crc << 1) ^ 0x04C11DB7) if crc & 0x80000000 else crc << 1
        table.append(crc & 0xFFFFFFFF)
    return table


_TABLE = _ogg_crc_table()


def _ogg_crc(data: bytes) -> int:
    crc = 0
    for byte in data:
        crc = ((crc << 8) ^ _TABLE[((crc >> 24) & 0xFF) ^ byte]) & 0xFFFFFFFF
    return crc


def _page(payload: bytes, *, sequence: int, granule: int, flags: int, serial: int) -> bytes:
    lacing = [255] * (len(payload) // 255) + [len(payload) % 255]
    head = struct.pack(
        "<4sBBqIIIB", b"OggS", 0, flags, granule, serial, sequence, 0, len(lacing)
    ) + bytes(lacing)
    page = head + payload
    crc = _ogg_crc(page)
    return page[:22] + struct.pack("<I", crc) + page[26:]


def ogg_opus(frames: int = 50) -> bytes:
    """A mono Ogg/Opus voice note of `frames` x 20 ms of silence (one second by default)."""
    serial = 0x5EED
    head = b"OpusHead" + struct.pack("<BBHIhB", 1, 1, 312, 48000, 0, 0)
    vendor = b"chatbot tests"
    tags = b"OpusTags" + struct.pack("<I", len(vendor)) + vendor + struct.pack("<I", 0)
    pages = [
        _page(head, sequence=0, granule=0, flags=0x02, serial=serial),
        _page(tags, sequence=1, granule=0, flags=0x00, serial=serial),
    ]
    # TOC 0xF8: CELT full band, 20 ms, mono, one frame; an empty frame is silence.
    for index in range(frames):
        last = index == frames - 1
        pages.append(
            _page(
                b"\xf8",
                sequence=2 + index,
                granule=312 + 960 * (index + 1),
                flags=0x04 if last else 0x00,
                serial=serial,
            )
        )
    return b"".join(pages)
