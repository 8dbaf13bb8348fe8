"""Which audio container some bytes are, and whether it holds sound alone.

Phones send voice notes as Ogg/Opus (Conversations, Element), MP4/M4A or 3GP (iOS,
Android), MP3, WAV, AMR or WebM (browsers). A container can hold a video as well: the
bot reads the container's own track list (Ogg's first pages, MP4's handler boxes,
WebM's TrackType) and takes only sound. Every walk is bounded by the data itself and a
step count, so a crafted length can neither loop nor read outside the bytes.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass

# A container holding more boxes or elements than this is not a voice note.
_MAX_STEPS = 10_000


@dataclass(frozen=True)
class Container:
    """What the bytes are: `content_type` and `extension` when sound alone, and in words."""

    looked: str
    content_type: str | None = None
    extension: str = ""

    @property
    def audio(self) -> bool:
        return self.content_type is not None


def container(data: bytes) -> Container | None:
    """The audio (or video) container `data` is; None when it is none of them."""
    if data.startswith(b"OggS"):
        return _ogg(data)
    if data[4:8] == b"ftyp":
        return _mp4(data)
    if data[:4] == b"RIFF" and data[8:12] == b"WAVE":
        return Container("a WAV recording", "audio/wav", ".wav")
    if data.startswith(b"\x1a\x45\xdf\xa3"):
        return _matroska(data)
    if data.startswith(b"#!AMR\n"):
        return Container("an AMR voice recording", "audio/amr", ".amr")
    if data.startswith(b"fLaC"):
        return Container("a FLAC recording", "audio/flac", ".flac")
    if _mp3(data):
        return Container("an MP3 recording", "audio/mpeg", ".mp3")
    return None


# --- Ogg: every stream starts with a page flagged "beginning of stream" ------------

_OGG_CODECS = {
    b"OpusHead": ("Opus", True),
    b"\x01vorbis": ("Vorbis", True),
    b"\x7fFLAC": ("FLAC", True),
    b"Speex   ": ("Speex", True),
    b"\x80theora": ("Theora", False),
    b"\x80kate\x00\x00\x00": ("Kate", False),
    b"fishead\x00": ("Skeleton", True),  # an index, no picture
}


def _ogg(data: bytes) -> Container:
    codecs: list[tuple[str, bool]] = []
    at = 0
    for _ in range(64):  # the beginning pages of all streams come first
        if data[at : at + 4] != b"OggS" or len(data) < at + 27:
            break
        flags, segments = data[at + 5], data[at + 26]
        if not flags & 0x02:  # no longer a beginning of a stream
            break
        body = at + 27 + segments
        length = sum(data[at + 27 : body])
        payload = data[body : body + length]
        found = next(
            (codec for magic, codec in _OGG_CODECS.items() if payload.startswith(magic)),
            ("unknown", False),
        )
        codecs.append(found)
        at = body + length
    if codecs and all(sound for _, sound in codecs):
        name = next((name for name, _ in codecs if name != "Skeleton"), "Ogg")
        return Container(f"an Ogg/{name} recording", "audio/ogg", ".ogg")
    return Container("an Ogg video" if codecs else "a damaged Ogg file")


# --- MP4, M4A, 3GP: boxes; each track's handler says sound ('soun') or picture ------


def _boxes(data: bytes, start: int, end: int) -> Iterator[tuple[bytes, int, int]]:
    at, steps = start, 0
    while at + 8 <= end and steps < _MAX_STEPS:
        steps += 1
        size, kind = struct.unpack_from(">I4s", data, at)
        header = 8
        if size == 1 and at + 16 <= end:
            size, header = struct.unpack_from(">Q", data, at + 8)[0], 16
        elif size == 0:
            size = end - at
        if size < header or at + size > end:
            return
        yield kind, at + header, at + size
        at += size


def _handlers(data: bytes) -> list[bytes]:
    found: list[bytes] = []
    for kind, start, end in _boxes(data, 0, len(data)):
        if kind != b"moov":
            continue
        for trak, t_start, t_end in _boxes(data, start, end):
            if trak != b"trak":
                continue
            for mdia, m_start, m_end in _boxes(data, t_start, t_end):
                if mdia != b"mdia":
                    continue
                for hdlr, h_start, h_end in _boxes(data, m_start, m_end):
                    if hdlr == b"hdlr" and h_end - h_start >= 12:
                        found.append(data[h_start + 8 : h_start + 12])
    return found


def _mp4(data: bytes) -> Container:
    brand = data[8:12]
    three_gp = brand.startswith(b"3g")
    name = "3GP" if three_gp else "MP4"
    handlers = _handlers(data)
    if b"vide" in handlers:
        return Container(f"a video ({name})")
    if b"soun" not in handlers:
        return Container(f"{'an' if name == 'MP4' else 'a'} {name} file with no sound in it")
    if three_gp:
        return Container("a 3GP voice recording", "audio/3gpp", ".3gp")
    return Container("an M4A recording", "audio/mp4", ".m4a")


# --- WebM and Matroska: EBML elements; a video track has TrackType 1 ----------------

_SEGMENT, _TRACKS, _TRACK_ENTRY, _TRACK_TYPE, _DOC_TYPE = (
    0x18538067,
    0x1654AE6B,
    0xAE,
    0x83,
    0x4282,
)
_UNKNOWN_SIZE = -1


def _vint(data: bytes, at: int, *, keep_marker: bool) -> tuple[int, int] | None:
    """An EBML variable-length integer at `at`: (value, its length in bytes)."""
    if at >= len(data) or data[at] == 0:
        return None
    first = data[at]
    length = 8 - first.bit_length() + 1
    if at + length > len(data):
        return None
    value = first if keep_marker else first & ((1 << (8 - length)) - 1)
    for byte in data[at + 1 : at + length]:
        value = (value << 8) | byte
    if not keep_marker and value == (1 << (7 * length)) - 1:
        return _UNKNOWN_SIZE, length  # "as far as the parent goes"
    return value, length


def _elements(data: bytes, start: int, end: int) -> Iterator[tuple[int, int, int]]:
    at, steps = start, 0
    while at < end and steps < _MAX_STEPS:
        steps += 1
        element = _vint(data, at, keep_marker=True)
        if element is None:
            return
        size = _vint(data, at + element[1], keep_marker=False)
        if size is None:
            return
        body = at + element[1] + size[1]
        stop = end if size[0] == _UNKNOWN_SIZE else min(end, body + size[0])
        yield element[0], body, stop
        if stop <= at:
            return
        at = stop


def _matroska(data: bytes) -> Container:
    doc_type = b""
    types: list[int] = []
    for element, start, end in _elements(data, 0, len(data)):
        if element == 0x1A45DFA3:
            for child, c_start, c_end in _elements(data, start, end):
                if child == _DOC_TYPE:
                    doc_type = data[c_start:c_end]
        elif element == _SEGMENT:
            for child, c_start, c_end in _elements(data, start, end):
                if child != _TRACKS:
                    continue
                for entry, e_start, e_end in _elements(data, c_start, c_end):
                    if entry != _TRACK_ENTRY:
                        continue
                    for field, f_start, f_end in _elements(data, e_start, e_end):
                        if field == _TRACK_TYPE:
                            types.append(int.from_bytes(data[f_start:f_end], "big"))
                break  # the tracks come before the clusters; no need to read on
    webm = doc_type == b"webm"
    name = "WebM" if webm else "Matroska"
    if 1 in types:
        return Container(f"a video ({name})")
    if 2 not in types:
        return Container(f"a {name} file with no sound found in it")
    if webm:
        return Container("a WebM recording", "audio/webm", ".webm")
    return Container("a Matroska recording", "audio/x-matroska", ".mka")


# --- MP3: an ID3 tag, then MPEG audio frames ----------------------------------------

_BITRATES_V1_L3 = (0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320)
_BITRATES_V2_L3 = (0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160)
_RATES = {3: (44100, 48000, 32000), 2: (22050, 24000, 16000), 0: (11025, 12000, 8000)}


def _frame_length(data: bytes, at: int) -> int | None:
    """The length of the MPEG layer III frame whose header is at `at`; None: none there."""
    if at + 4 > len(data) or data[at] != 0xFF or data[at + 1] & 0xE0 != 0xE0:
        return None
    version = (data[at + 1] >> 3) & 0x03
    layer = (data[at + 1] >> 1) & 0x03
    bitrate_index = data[at + 2] >> 4
    rate_index = (data[at + 2] >> 2) & 0x03
    if version == 1 or layer != 1 or bitrate_index in (0, 15) or rate_index == 3:
        return None
    padding = (data[at + 2] >> 1) & 0x01
    if version == 3:
        bitrate = _BITRATES_V1_L3[bitrate_index] * 1000
        return 144 * bitrate // _RATES[3][rate_index] + padding
    bitrate = _BITRATES_V2_L3[bitrate_index] * 1000
    return 72 * bitrate // _RATES[version][rate_index] + padding


def _mp3(data: bytes) -> bool:
    at = 0
    if data.startswith(b"ID3") and len(data) >= 10:
        size = 0
        for byte in data[6:10]:  # "syncsafe": 7 bits a byte
            if byte & 0x80:
                return False
            size = (size << 7) | byte
        at = 10 + size + (10 if data[5] & 0x10 else 0)
    first = _frame_length(data, at)
    if first is None:
        return False
    following = at + first
    # A second frame where the first one ends: a lone 0xFFFx pair is not an MP3.
    return following >= len(data) or _frame_length(data, following) is not None
