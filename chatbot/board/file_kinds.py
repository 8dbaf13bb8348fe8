"""What a file is, from its bytes alone: the kinds the bot keeps, and words for the rest.

The sender's name and MIME type are claims anyone can make (an executable named
`screenshot.png`), so nothing here looks at them. A picture is PNG, JPEG, GIF or WebP
whose header Pillow reads within a pixel limit before anything is decoded (a 100 kB
PNG can claim 100,000 × 100,000 pixels: a decompression bomb). A PDF starts as PDFs
do; a voice note is an audio container holding sound alone (audio_kinds.py); text is
valid UTF-8 without NUL bytes. HTML and SVG are text here: they are kept and sent as
`text/plain`, never as a page or a picture that a browser would run.

Anything else is refused with what the bytes looked like (puremagic names formats the
bot does not take) and what it takes instead.
"""

from __future__ import annotations

import io
import re
import threading
import warnings
from dataclasses import dataclass
from enum import StrEnum

import puremagic
from PIL import Image, UnidentifiedImageError

from chatbot.board.audio_kinds import container

DEFAULT_MAX_PIXELS = 50_000_000
TAKEN = "the bot takes pictures (PNG, JPEG, GIF, WebP), PDFs, text files and voice notes"
TEXT_TYPE = "text/plain; charset=utf-8"


class FileKind(StrEnum):
    IMAGE = "image"
    TEXT = "text"
    PDF = "pdf"
    AUDIO = "audio"


@dataclass(frozen=True)
class Sniffed:
    kind: FileKind
    #: The MIME type stored and sent: the bytes', never the sender's.
    content_type: str
    #: What a name for these bytes ends with (".png").
    extension: str
    #: The bytes in words ("a PNG picture, 1280 × 720").
    looked: str


class NotTaken(ValueError):
    """Bytes of no kind the bot keeps; `str()` says why and what it takes, for the chat."""

    def __init__(self, reason: str, looked: str):
        super().__init__(reason)
        self.looked = looked


# The picture formats taken: (the signature, Pillow's name, MIME type, extension, words).
_PICTURES = (
    (b"\x89PNG\r\n\x1a\n", "PNG", "image/png", ".png", "a PNG picture"),
    (b"\xff\xd8\xff", "JPEG", "image/jpeg", ".jpg", "a JPEG picture"),
    (b"GIF87a", "GIF", "image/gif", ".gif", "a GIF picture"),
    (b"GIF89a", "GIF", "image/gif", ".gif", "a GIF picture"),
)
# Pillow's limit and its warning filter are process-wide: one picture at a time.
_PILLOW = threading.Lock()
# How Pillow says the pixels a header claims ("Image size (10000000000 pixels) exceeds ...").
_BOMB_PIXELS = re.compile(r"\((\d+) pixels\)")


def identify(data: bytes, *, max_pixels: int = DEFAULT_MAX_PIXELS) -> Sniffed:
    """The kind of `data`; NotTaken when the bot does not keep such bytes."""
    if not data:
        raise NotTaken("the file is empty", "an empty file")
    picture = _picture_format(data)
    if picture is not None:
        return _picture(data, picture, max_pixels)
    if data.startswith(b"%PDF-"):
        return Sniffed(FileKind.PDF, "application/pdf", ".pdf", "a PDF document")
    found = container(data)
    if found is not None:
        if found.content_type is None:
            raise NotTaken(f"took it for {found.looked}; {TAKEN}", found.looked)
        return Sniffed(FileKind.AUDIO, found.content_type, found.extension, found.looked)
    if b"\x00" not in data:
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            looked = "text that is not UTF-8"
            raise NotTaken(
                f"took it for {looked}; save it as UTF-8 and send it again", looked
            ) from None
        return Sniffed(FileKind.TEXT, TEXT_TYPE, ".txt", _text_words(data))
    looked = looks_like(data)
    raise NotTaken(f"took it for {looked}; {TAKEN}", looked)


def sniff(data: bytes, *, max_pixels: int = DEFAULT_MAX_PIXELS) -> tuple[FileKind | None, str]:
    """(the kind, the bytes in words); the kind is None for bytes the bot does not keep."""
    try:
        found = identify(data, max_pixels=max_pixels)
    except NotTaken as refused:
        return None, refused.looked
    return found.kind, found.looked


def _picture_format(data: bytes) -> tuple[str, str, str, str] | None:
    for signature, pillow, mime, extension, words in _PICTURES:
        if data.startswith(signature):
            return pillow, mime, extension, words
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "WEBP", "image/webp", ".webp", "a WebP picture"
    return None


def _picture(data: bytes, found: tuple[str, str, str, str], max_pixels: int) -> Sniffed:
    pillow, mime, extension, words = found
    limit = f"the bot decodes at most {max_pixels:,} ([files] max_pixels)"
    with _PILLOW, warnings.catch_warnings():
        # Pillow warns past its limit and refuses past twice that; both are a refusal.
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        Image.MAX_IMAGE_PIXELS = max_pixels
        try:
            # Reads the header only; `formats` keeps Pillow to the four taken.
            with Image.open(io.BytesIO(data), formats=[pillow]) as image:
                width, height = image.size
                if width * height > max_pixels:
                    raise NotTaken(
                        f"the picture is {width:,} × {height:,} pixels; {limit}",
                        f"{words} of {width:,} × {height:,} pixels",
                    )
                image.verify()  # the file's structure (PNG: every chunk's checksum)
        except (Image.DecompressionBombError, Image.DecompressionBombWarning) as bomb:
            claimed = _BOMB_PIXELS.search(str(bomb))
            pixels = f"{int(claimed.group(1)):,} pixels" if claimed else "too many pixels"
            raise NotTaken(
                f"the picture claims {pixels}; {limit}", f"{words} of {pixels}"
            ) from None
        except NotTaken:
            raise
        except (UnidentifiedImageError, OSError, SyntaxError, ValueError, EOFError):
            looked = f"{words} that cannot be read"
            raise NotTaken(
                f"took it for {looked} (damaged or cut off); send it again", looked
            ) from None
    return Sniffed(FileKind.IMAGE, mime, extension, f"{words}, {width:,} × {height:,}")


def _text_words(data: bytes) -> str:
    start = data[:512].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    if start.startswith((b"<!doctype html", b"<html")):
        return "an HTML page (kept as plain text)"
    if b"<svg" in start:
        return "an SVG drawing (kept as plain text)"
    return "a text file"


# Formats worth naming in a reader's words; puremagic's names for the rest.
_NAMED = (
    (b"\x7fELF", "a Linux executable"),
    (b"MZ", "a Windows program"),
    (b"\xcf\xfa\xed\xfe", "a macOS program"),
    (b"\xce\xfa\xed\xfe", "a macOS program"),
    (b"\xca\xfe\xba\xbe", "a macOS program or Java class"),
    (b"PK\x03\x04", "a ZIP archive (or an Office document, APK or JAR)"),
    (b"\x1f\x8b", "a gzip archive"),
)


def looks_like(data: bytes) -> str:
    """What bytes of a kind the bot does not keep looked like, in words."""
    for signature, words in _NAMED:
        if data.startswith(signature):
            return words
    try:
        guesses = puremagic.magic_string(data[:65536])
    except (puremagic.PureError, ValueError):
        guesses = []
    if guesses:
        name = " ".join(str(guesses[0].name).split())[:60].strip() or "a file"
        return name if name.lower().startswith(("a ", "an ")) else f"{_article(name)} {name}"
    return "binary data of no known kind"


def _article(name: str) -> str:
    return "an" if name[:1].lower() in "aeiou" else "a"
