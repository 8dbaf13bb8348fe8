"""A file's kind comes from its bytes alone (issue 36): each kind taken, what is refused
and in which words, and a decompression bomb refused from its header."""

from __future__ import annotations

import pytest

from chatbot.board.file_kinds import TEXT_TYPE, FileKind, NotTaken, identify, sniff
from tests.board import file_samples as samples


@pytest.mark.parametrize(
    ("data", "kind", "content_type"),
    [
        (samples.picture("PNG"), FileKind.IMAGE, "image/png"),
        (samples.picture("JPEG"), FileKind.IMAGE, "image/jpeg"),
        (samples.picture("GIF"), FileKind.IMAGE, "image/gif"),
        (samples.picture("WEBP"), FileKind.IMAGE, "image/webp"),
        (samples.pdf(), FileKind.PDF, "application/pdf"),
        (samples.ogg(), FileKind.AUDIO, "audio/ogg"),
        (samples.mp4(b"soun"), FileKind.AUDIO, "audio/mp4"),
        (samples.mp4(b"soun", brand=b"3gp4"), FileKind.AUDIO, "audio/3gpp"),
        (samples.mp3(), FileKind.AUDIO, "audio/mpeg"),
        (samples.wav(), FileKind.AUDIO, "audio/wav"),
        (samples.webm(2), FileKind.AUDIO, "audio/webm"),
        ("a log line\nnext: ünïcödé ✓\n".encode(), FileKind.TEXT, TEXT_TYPE),
        (b'{"json": [1, 2]}', FileKind.TEXT, TEXT_TYPE),
        (b"--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n", FileKind.TEXT, TEXT_TYPE),
        (b"\x1b[31mred\x1b[0m build failed\n", FileKind.TEXT, TEXT_TYPE),  # a coloured log
    ],
    ids=lambda value: value if isinstance(value, str) else None,
)
def test_each_kind_is_told_by_its_bytes(data: bytes, kind: FileKind, content_type: str) -> None:
    found = identify(data)
    assert (found.kind, found.content_type) == (kind, content_type)
    assert sniff(data) == (kind, found.looked)


def test_a_picture_named_txt_is_a_picture_and_an_executable_named_png_is_refused() -> None:
    # identify() has no name to be fooled by: the claim never reaches it.
    assert identify(samples.picture("PNG")).kind is FileKind.IMAGE
    with pytest.raises(NotTaken) as refused:
        identify(samples.elf())
    assert str(refused.value) == (
        "took it for a Linux executable; the bot takes pictures (PNG, JPEG, GIF, WebP), "
        "PDFs, text files and voice notes"
    )
    assert sniff(samples.elf()) == (None, "a Linux executable")


@pytest.mark.parametrize(
    ("data", "words"),
    [
        (b"MZ\x90\x00" + b"\x00" * 200, "a Windows program"),
        (b"PK\x03\x04" + b"\x00" * 60, "a ZIP archive"),
        (b"7z\xbc\xaf\x27\x1c\x00\x04" + b"\x00" * 40, "7-Zip"),
        (samples.mp4(b"soun", b"vide", brand=b"isom"), "a video (MP4)"),
        (samples.webm(2, 1), "a video (WebM)"),
        (samples.ogg(b"OpusHead\x01", b"\x80theora"), "an Ogg video"),
        (bytes(range(256)) * 4, "binary data of no known kind"),
    ],
)
def test_what_is_refused_is_named(data: bytes, words: str) -> None:
    with pytest.raises(NotTaken) as refused:
        identify(data)
    assert words in str(refused.value)
    assert "the bot takes pictures" in str(refused.value)


def test_html_and_svg_are_plain_text_never_a_page_or_a_picture() -> None:
    page = identify(b"<!DOCTYPE html><html><script>alert(1)</script></html>")
    drawing = identify(b'<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"/>')
    assert (page.kind, page.content_type) == (FileKind.TEXT, "text/plain; charset=utf-8")
    assert (drawing.kind, drawing.content_type) == (FileKind.TEXT, "text/plain; charset=utf-8")
    assert "kept as plain text" in page.looked and "SVG" in drawing.looked


def test_text_that_is_not_utf8_or_holds_nul_bytes_is_refused() -> None:
    with pytest.raises(NotTaken, match="not UTF-8; save it as UTF-8"):
        identify("Grüße aus Köln".encode("latin-1"))
    with pytest.raises(NotTaken):
        identify("utf-16 text".encode("utf-16"))
    with pytest.raises(NotTaken, match="empty"):
        identify(b"")


def test_a_decompression_bomb_is_refused_from_its_header_naming_the_limit() -> None:
    bomb = samples.png_claiming(100_000, 100_000)
    assert len(bomb) < 100
    with pytest.raises(NotTaken) as refused:
        identify(bomb)
    assert str(refused.value) == (
        "the picture claims 10,000,000,000 pixels; "
        "the bot decodes at most 50,000,000 ([files] max_pixels)"
    )
    # Just over the limit (where Pillow only warns) is refused as well.
    with pytest.raises(NotTaken, match=r"at most 1,000,000 \(\[files\] max_pixels\)"):
        identify(samples.png_claiming(1001, 1000), max_pixels=1_000_000)
    assert identify(samples.picture(size=(1000, 1000)), max_pixels=1_000_000).kind is FileKind.IMAGE


def test_a_damaged_picture_is_refused() -> None:
    with pytest.raises(NotTaken, match="a PNG picture that cannot be read"):
        identify(samples.picture("PNG")[:40])
