"""A kept file's name: the sender's, fit to show and to write as a file name.

Only its last path part is kept, without control or invisible characters (a bidi
override can make `gpj.exe` read as `exe.jpg`), bounded, and ending as its bytes are:
a PNG sent as `shot.txt` becomes `shot.txt.png`; a text file named like a web page
gets `.txt`, so nothing opens it as one.
"""

from __future__ import annotations

import re
import unicodedata

from chatbot.board.file_kinds import FileKind, Sniffed

MB = 1024 * 1024
# A display name's length; the part after the last dot is kept when it is cut.
MAX_NAME = 120
_UNSHOWN = frozenset({"Cc", "Cf", "Zl", "Zp", "Co", "Cn", "Cs"})
# Names a browser or a file manager would open as a page: kept as text, named so.
_PAGE_SUFFIXES = (".html", ".htm", ".xhtml", ".xht", ".shtml", ".svg", ".svgz", ".mht", ".mhtml")
# The names each sniffed type may end with; another ending gets the type's own added.
_SUFFIXES = {
    "image/png": (".png",),
    "image/jpeg": (".jpg", ".jpeg", ".jpe"),
    "image/gif": (".gif",),
    "image/webp": (".webp",),
    "application/pdf": (".pdf",),
    "audio/ogg": (".ogg", ".oga", ".opus"),
    "audio/mp4": (".m4a", ".mp4", ".aac"),
    "audio/3gpp": (".3gp", ".3ga"),
    "audio/mpeg": (".mp3",),
    "audio/wav": (".wav",),
    "audio/webm": (".webm", ".weba"),
    "audio/x-matroska": (".mka", ".mkv"),
    "audio/amr": (".amr",),
    "audio/flac": (".flac",),
}


def size_words(size: int) -> str:
    """45 KB, 3.2 MB: as a person reads a file's size."""
    if size < 1024:
        return f"{size} B"
    if size < MB:
        return f"{size / 1024:.0f} KB"
    return f"{size / MB:.1f} MB"


def display_name(name: str, found: Sniffed) -> str:
    """The sender's name fit to show and to write as a file name: its last path part,
    without control or invisible characters, bounded, ending as its bytes are."""
    name = unicodedata.normalize("NFC", name)
    name = re.split(r"[/\\]", name)[-1]
    name = "".join(c for c in name if unicodedata.category(c) not in _UNSHOWN)
    name = " ".join(name.split()).strip(" .")  # no hidden ".name", no "..", no padding
    if not name:
        name = {
            FileKind.IMAGE: "picture",
            FileKind.PDF: "document",
            FileKind.AUDIO: "voice",
            FileKind.TEXT: "text",
        }[found.kind] + found.extension
    lowered = name.lower()
    if found.kind is FileKind.TEXT:
        if lowered.endswith(_PAGE_SUFFIXES):
            name += ".txt"
    elif not lowered.endswith(_SUFFIXES.get(found.content_type, (found.extension,))):
        name += found.extension
    return _bounded(name)


def _bounded(name: str) -> str:
    if len(name) <= MAX_NAME:
        return name
    stem, dot, suffix = name.rpartition(".")
    if dot and 0 < len(suffix) <= 16:
        return stem[: MAX_NAME - len(suffix) - 2] + "…." + suffix
    return name[: MAX_NAME - 1] + "…"
