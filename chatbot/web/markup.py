"""HTML built so that escaping is the default: every value is escaped unless it is `Safe`.

Card titles, intents, reports, questions, model names and failure texts come from
people and models; none of them may become markup. Templates here are our own
constant strings; values go in through `tag`, which escapes them. Markdown is
rendered by notify.format (raw HTML off, images off: nothing loads from elsewhere).
"""

from __future__ import annotations

import html
import time
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime

from chatbot.notify.format import markdown_html


class Safe(str):
    """Markup we built ourselves (or escaped); `tag` inserts it as it is."""


def scroll_table(css_class: str, heads: Iterable[str], rows: Iterable[Safe]) -> Safe:
    """A table that scrolls sideways inside its own box on a narrow screen."""
    return tag(
        '<div class="scroll"><table class="{css_class}"><thead><tr>{heads}</tr></thead>'
        "<tbody>{rows}</tbody></table></div>",
        css_class=css_class,
        heads=join(tag("<th>{h}</th>", h=head) for head in heads),
        rows=join(rows),
    )


def labelled_row(labels: Sequence[str], cells: Iterable[object]) -> Safe:
    """A table row whose every cell names its column (data-label): on a phone the
    stylesheet makes a row a block of labelled lines, so the page never scrolls sideways."""
    return Safe(
        "<tr>"
        + "".join(
            f'<td data-label="{esc(label)}">{esc(cell)}</td>'
            for label, cell in zip(labels, cells, strict=True)
        )
        + "</tr>"
    )


def esc(value: object) -> Safe:
    if isinstance(value, Safe):
        return value
    return Safe(html.escape("" if value is None else str(value), quote=True))


def tag(template: str, /, **values: object) -> Safe:
    """Fill a template of ours; every value is escaped unless it is `Safe`."""
    return Safe(template.format(**{name: esc(value) for name, value in values.items()}))


def join(parts: Iterable[object], separator: str = "") -> Safe:
    return Safe(separator.join(esc(part) for part in parts))


def markdown(text: str) -> Safe:
    # The one markdown renderer (raw HTML and images off, unsafe links refused).
    return Safe(markdown_html(text))


def iso(at: float) -> str:
    """The moment in UTC, for a `<time datetime>`: static/times.js shows it in the
    reader's own time zone."""
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def clock(at: float) -> str:
    """The moment to the minute in UTC, and saying so: the server's time zone is nobody's
    in particular, and a page without its script still reads right."""
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d %H:%M UTC")


def moment(at: float) -> Safe:
    """A moment as pages show it: UTC, shown in the reader's time zone by times.js."""
    return tag('<time datetime="{iso}">{text}</time>', iso=iso(at), text=clock(at))


def age(seconds: float, units: Mapping[str, str]) -> str:
    """3 s, 12 min, 5 h, 2 d: the coarse age people read at a glance."""
    seconds = max(0, int(seconds))
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return units[unit].format(n=seconds // size)
    return units["s"].format(n=seconds)


def since(at: float, units: dict[str, str], now: float | None = None) -> Safe:
    """An age that the page's script keeps current (data-since), and that reads right
    without the script too."""
    now = time.time() if now is None else now
    return tag(
        '<time datetime="{iso}" data-since="{at}">{text}</time>',
        iso=iso(at),
        at=f"{at:.0f}",
        text=age(now - at, units),
    )
