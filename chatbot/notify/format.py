"""Formatting every message shares: one way to cut text, one way to say how long.

Text is cut without splitting a character as people see it (a combining mark,
a keycap, a skin tone, a zero-width-joiner sequence, a flag's pair of regional
indicators), at a line or word boundary where there is one nearby.
"""

from __future__ import annotations

import re
import unicodedata

import nh3
from markdown_it import MarkdownIt

from chatbot.domain.shown import visible
from chatbot.transports.networks import formatted

#: The longest post the notices make; a longer one is cut (and says where the rest is).
MAX_POST_CHARS = 3500

# Code points that attach to the one before: ZWJ, variation selectors, keycap, skin tones.
_EXTENDERS = {"\u200d", "\ufe0e", "\ufe0f", "\u20e3", *map(chr, range(0x1F3FB, 0x1F400))}


def prefix(text: str, limit: int) -> str:
    """The longest prefix of at most `limit` characters that does not split a character.

    Python strings index code points, so no byte sequence can break; what can break
    is a character as people see it. Step back until the cut is between two.
    """
    end = min(limit, len(text))
    while 0 < end < len(text) and _joined(text, end):
        end -= 1
    return text[:end]


def cut(body: str, limit: int, tail: str = "") -> str:
    """Shorten to `limit` at a line or word boundary, never mid-character; `tail` says
    where the rest is (it is counted in the limit)."""
    if len(body) <= limit:
        return body
    room = max(0, limit - len(tail))
    clipped = prefix(body, room)
    boundary = max(clipped.rfind("\n"), clipped.rfind(" "))
    if boundary > room // 2:
        clipped = clipped[:boundary]
    return clipped.rstrip() + tail


def one_line(text: str, limit: int) -> str:
    """Text as one short line: whitespace collapsed, cut with an ellipsis."""
    line = " ".join(text.split())
    return line if len(line) <= limit else prefix(line, limit - 1) + "…"


def duration(seconds: float) -> str:
    """How long, as people say it on a phone: 40s, 2m 05s, 1h 20m."""
    seconds = max(0, int(round(seconds)))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m {seconds % 60:02d}s"
    return f"{seconds // 3600}h {seconds % 3600 // 60:02d}m"


def commands_with(text: str, prefix: str, names: tuple[str, ...]) -> str:
    """`text` with the commands `names` written with `prefix` instead of "/" (texts say
    /start; a bot whose first configured prefix is "!" says !start)."""
    if prefix == "/" or not names:
        return text
    written = re.compile(r"(?<![\w/:.])/(" + "|".join(map(re.escape, names)) + r")\b")
    # What is quoted in a fenced code block (a diff, a report's example) stays as it is.
    parts = []
    fence = ""
    for line in text.split("\n"):
        opening = _FENCE.match(line)
        if fence:
            if opening and opening.group(1).startswith(fence) and not line.strip(" `"):
                fence = ""
        elif opening:
            fence = opening.group(1)
        else:
            line = written.sub(lambda m: prefix + m.group(1), line)
        parts.append(line)
    return "\n".join(parts)


_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")


# commonmark with raw HTML off (a `<script>` in a report is shown as text) and images
# off (`![x](https://elsewhere/x.png)` would make a client load from outside).
_MARKDOWN = (
    MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    .enable(["table", "strikethrough"])
    .disable("image")
)


# What the Matrix spec lets a client show (m.room.message, "HTML"); a second line of
# defence behind markdown-it's own escaping, so a renderer bug cannot let more through.
_TAGS = {
    "del", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "p", "a", "ul", "ol",
    "sup", "sub", "li", "b", "i", "u", "strong", "em", "s", "code", "hr", "br",
    "div", "table", "thead", "tbody", "tr", "th", "td", "caption", "pre", "span",
}  # fmt: skip
# "*": nothing on every tag. Without it nh3 keeps ammonia's generic `title` and `lang`,
# and a link's title (`[x](https://e.example "...")`) would pass where Matrix allows none.
# A span's colour is Matrix's own attribute (the /diff lines); markdown makes none.
_ATTRIBUTES = {
    "*": set(),
    "a": {"href"},
    "ol": {"start"},
    "code": {"class"},
    "span": {"data-mx-color"},
}


def fenced(text: str, language: str = "") -> str:
    """`text` as a code block whose fence is longer than any run of backticks inside, so
    the text (an agent's code) cannot close it and is shown as it is."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text}\n{fence}"


def markdown_html(text: str) -> str:
    """Markdown as HTML that can be trusted: markdown-it escapes all text and refuses
    javascript:, vbscript:, file: and data: link targets (its validateLink); then
    `sanitised_html` holds the result to what Matrix allows."""
    return sanitised_html(_MARKDOWN.render(text))


def html_for(transport: str, text: str) -> str | None:
    """A post's formatted body where its network shows HTML (its record says so:
    Matrix); None where the markdown text is all it shows (XMPP, the console)."""
    return markdown_html(text) if formatted(transport) else None


def sanitised_html(html: str) -> str:
    """Only the tags and attributes Matrix allows, links to http(s) and mailto: the
    second line of defence, which must hold on its own (tested with raw hostile HTML)."""
    return nh3.clean(
        html,
        tags=_TAGS,
        attributes=_ATTRIBUTES,
        url_schemes={"http", "https", "mailto"},
        link_rel=None,
    )


def _joined(line: str, at: int) -> bool:
    """True when line[at] still belongs to the character before it."""
    here, before = line[at], line[at - 1]
    if unicodedata.combining(here) or here in _EXTENDERS or before == "\u200d":
        return True
    if _is_regional(here) and _is_regional(before):
        # Flags pair up from the start of a run of regional indicators.
        run = 0
        while at - run - 1 >= 0 and _is_regional(line[at - run - 1]):
            run += 1
        return run % 2 == 1
    return False


def _is_regional(char: str) -> bool:
    return "\U0001f1e6" <= char <= "\U0001f1ff"


def usd(amount: float) -> str:
    """Money as people read it in a room: two decimals, a cent's fraction where it matters."""
    return f"${amount:.2f}" if amount >= 0.1 or amount == 0 else f"${amount:.4f}"


#: How much of an asked command a chat message shows.
SHOWN_CHARS = 400

_BACKTICKS = re.compile(r"`+")


def inert(text: str, limit: int = SHOWN_CHARS) -> str:
    """`text` as a code block no client renders as anything but text: an agent's
    command (untrusted) in a chat message. Invisible characters become visible escapes
    (`chatbot.domain.shown`),
    the fence is longer than any run of backticks in it, and each `@` is followed by a
    zero-width space, so no client takes anything in it for markup or a mention."""
    shown = visible(text)
    shown = shown.replace("@", "@\u200b")
    shown = cut(shown, limit, " …")
    longest = max((len(run) for run in _BACKTICKS.findall(shown)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{shown}\n{fence}"


def inert_inline(text: str, limit: int = 90) -> str:
    """One short line as inline code: no markup, no mention, invisible characters shown."""
    shown = one_line(visible(text), limit).replace("@", "@\u200b")
    longest = max((len(run) for run in _BACKTICKS.findall(shown)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if shown.startswith("`") or shown.endswith("`") else ""
    return f"{ticks}{pad}{shown}{pad}{ticks}"
