"""Markdown for Matrix: rendered by markdown-it, then held to Matrix's tag list."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

from chatbot.notify.format import commands_with, markdown_html


def test_markdown_becomes_html() -> None:
    html = markdown_html("# Review\n\n**pass** with `one` note\n\n- a\n- b\n")
    assert "<h1>Review</h1>" in html
    assert "<strong>pass</strong>" in html
    assert "<code>one</code>" in html
    assert "<ul>" in html and "<li>a</li>" in html


@pytest.mark.parametrize(
    "hostile",
    [
        "<script>alert(1)</script>",
        '<img src="https://elsewhere.example/x.png" onerror="alert(1)">',
        "![tracker](https://elsewhere.example/pixel.png)",
        "[click](javascript:alert(1))",
        "[data](data:text/html;base64,PHNjcmlwdD4=)",
        '<a href="https://e.example" onclick="alert(1)">x</a>',
        "<iframe src=https://e.example></iframe>",
        "<style>body{display:none}</style>",
    ],
)
def test_nothing_active_gets_through(hostile: str) -> None:
    html = markdown_html(f"text before\n\n{hostile}\n\ntext after")
    elements = _elements(html)
    assert {tag for tag, _ in elements} <= {"p", "a"}, html
    for _tag, attributes in elements:
        assert not [name for name, _ in attributes if name.startswith("on")], html
        assert all(
            value.startswith(("https:", "http:", "mailto:"))
            for name, value in attributes
            if name == "href"
        )
    # What was refused is still there to read, as text.
    assert "text before" in html and "text after" in html


def test_links_keep_only_web_and_mail_targets() -> None:
    html = markdown_html(
        "[site](https://example.org/a) [mail](mailto:o@example.org) [f](file:///etc/passwd)"
    )
    assert 'href="https://example.org/a"' in html
    assert 'href="mailto:o@example.org"' in html
    hrefs = [
        value for _, attributes in _elements(html) for name, value in attributes if name == "href"
    ]
    assert hrefs == ["https://example.org/a", "mailto:o@example.org"]


def test_code_blocks_keep_their_language_and_escape_their_text() -> None:
    html = markdown_html("```diff\n-<b>old</b>\n+new & better\n```")
    assert '<pre><code class="language-diff">' in html
    assert "&lt;b&gt;old&lt;/b&gt;" in html
    assert "new &amp; better" in html


def test_tables_render_without_style_attributes() -> None:
    html = markdown_html("| a | b |\n|---|:-:|\n| 1 | 2 |")
    assert "<table>" in html and "<td>2</td>" in html
    assert "style=" not in html


def test_commands_are_written_with_the_rooms_prefix() -> None:
    names = ("start", "retry", "status")
    text = "Reply /retry demo or /start demo; see https://x.example/start and a/status."
    assert commands_with(text, "!", names) == (
        "Reply !retry demo or !start demo; see https://x.example/start and a/status."
    )
    assert commands_with(text, "/", names) == text
    assert commands_with("/unknown stays", "!", names) == "/unknown stays"


def _elements(html: str) -> list[tuple[str, list[tuple[str, str]]]]:
    """Every start tag the HTML really has (escaped text is not a tag), with attributes."""
    found: list[tuple[str, list[tuple[str, str]]]] = []

    class Collect(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            found.append((tag, [(name, value or "") for name, value in attrs]))

    Collect().feed(html)
    return found


def test_commands_inside_a_fenced_block_stay_as_written() -> None:
    text = "Run /status demo.\n```diff\n+/status is a path here\n```\nThen /retry demo."
    assert commands_with(text, "!", ("status", "retry")) == (
        "Run !status demo.\n```diff\n+/status is a path here\n```\nThen !retry demo."
    )
    longer = "````\n```\n/status\n```\n````\n/status"
    assert commands_with(longer, "!", ("status",)) == "````\n```\n/status\n```\n````\n!status"
