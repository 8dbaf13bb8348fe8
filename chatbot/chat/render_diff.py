"""/diff as chat answers: a summary of the card's change, then one message per file.

Each file's lines carry their line number in the new file, so a reply quoting a few
of them says which lines it is about (chat/commenting.py reads them back). The
lines are the agent's text: invisible characters become escapes (`visible`), the
code block's fence is longer than any backticks inside, and the HTML for networks
that show it (Matrix) is built from escaped text and held to Matrix's tags.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

from chatbot.chat.texts import say
from chatbot.domain.counted import counted
from chatbot.domain.shown import visible
from chatbot.notify.format import cut, fenced, sanitised_html
from runners.diff_files import CommitDiff, DiffLine, FileChange

# Files per /diff answer; the next ones are on the next page.
FILES_PER_PAGE = 3
# What one file's message shows: a phone screen or two, within one message's size.
FILE_LINES = 60
FILE_CHARS = 3_000
LINE_CHARS = 160
# A line as it is shown: its number in the new file (none for a removed line), its sign.
_NUMBERED = re.compile(r"^\s*(\d+)\s+[+ ]\s?")
_COLOURS = {"+": "#1a7f37", "-": "#cf222e", "@": "#8250df"}


@dataclass(frozen=True)
class FilePost:
    path: str
    text: str
    html: str


def pages(change: CommitDiff) -> int:
    return max(1, -(-len(change.files) // FILES_PER_PAGE))


def is_long(change: CommitDiff) -> bool:
    """More than the first page shows, or a file cut short in its post: a change worth a
    .patch file of its own beside the pages."""
    return (
        change.cut
        or pages(change) > 1
        or any(len(found.lines) > FILE_LINES or found.lines_left for found in change.files)
    )


def summary(slug: str, change: CommitDiff, page: int, locale: str) -> str:
    """The change in numbers, and each file of this page with its count of lines."""
    added = sum(f.added for f in change.files)
    removed = sum(f.removed for f in change.files)
    head = say(
        locale,
        "diff_summary",
        slug=slug,
        commit=change.commit[:12],
        files=counted(len(change.files), "file", locale),
        added=added,
        removed=removed,
    )
    lines = [head]
    for number, found in enumerate(change.files, start=1):
        shown = f"{number}. {visible(found.path)} +{found.added} -{found.removed}"
        what = status_words(found, locale)
        lines.append(f"{shown} ({what})" if what else shown)
    listing = cut("\n".join(lines[1:]), 1_500, "\n…")
    total = pages(change)
    if total > 1:
        head += " " + say(locale, "diff_page", page=page, pages=total)
    if change.cut:
        head += " " + say(locale, "diff_cut")
    return f"{head}\n{fenced(listing)}" if listing else head


def status_words(found: FileChange, locale: str) -> str:
    said = []
    if found.status in ("added", "deleted"):
        said.append(say(locale, f"diff_{found.status}"))
    elif found.status in ("renamed", "copied") and found.old_path:
        said.append(say(locale, f"diff_{found.status}", old=visible(found.old_path)))
    if found.old_mode and found.new_mode and found.old_mode != found.new_mode:
        said.append(say(locale, "diff_mode", old=found.old_mode, new=found.new_mode))
    if found.binary:
        said.append(say(locale, "diff_binary"))
    return ", ".join(said)


def _shown(line: DiffLine) -> str:
    text = visible(line.text)
    if len(text) > LINE_CHARS or line.cut:
        text = text[:LINE_CHARS] + "…"
    if line.kind in ("@", "\\"):
        return text
    number = "" if line.number is None else str(line.number)
    return f"{number:>4} {line.kind} {text}"


def file_post(slug: str, change: CommitDiff, index: int, locale: str) -> FilePost:
    """File `index` (0-based) of the change as one message: plain text and HTML."""
    found = change.files[index]
    head = say(
        locale,
        "diff_file",
        n=index + 1,
        of=len(change.files),
        path=visible(found.path),
        added=found.added,
        removed=found.removed,
        slug=slug,
        commit=change.commit[:12],
    )
    what = status_words(found, locale)
    if what:
        head += f" ({what})"
    shown: list[tuple[str, str]] = []
    size = 0
    for line in found.lines:
        text = _shown(line)
        if len(shown) >= FILE_LINES or size + len(text) > FILE_CHARS:
            break
        shown.append((line.kind, text))
        size += len(text) + 1
    left = len(found.lines) - len(shown) + found.lines_left
    tail = ""
    if left > 0:
        more = counted(left, "more line", locale)
        tail = say(locale, "diff_file_more", count=more, slug=slug)
    elif not shown:
        tail = say(locale, "diff_file_no_lines")
    body = "\n".join(text for _, text in shown)
    text = head + (f"\n{fenced(body)}" if body else "") + (f"\n{tail}" if tail else "")
    rows = []
    for kind, shown_line in shown:
        escaped = html.escape(shown_line, quote=False)
        colour = _COLOURS.get(kind)
        rows.append(f'<span data-mx-color="{colour}">{escaped}</span>' if colour else escaped)
    markup = f"<p>{html.escape(head, quote=False)}</p>"
    if rows:
        markup += "<pre><code>" + "\n".join(rows) + "</code></pre>"
    if tail:
        markup += f"<p>{html.escape(tail, quote=False)}</p>"
    return FilePost(found.path, text, sanitised_html(markup))


def quoted_lines(quote: str) -> tuple[int, int] | None:
    """The lines a reply quotes, from the numbers /diff put before them; None: none."""
    numbers = []
    for raw in quote.splitlines():
        line = raw.lstrip()
        while line.startswith(">"):
            line = line[1:].lstrip(" ")
        found = _NUMBERED.match(line)
        if found:
            numbers.append(int(found.group(1)))
    if not numbers:
        return None
    return min(numbers), max(numbers)


def split_quote(text: str) -> tuple[str, str]:
    """A message's quoted lines ("> ...") and the rest: the words."""
    quoted: list[str] = []
    words: list[str] = []
    for line in text.splitlines():
        (quoted if line.lstrip().startswith(">") else words).append(line)
    return "\n".join(quoted), "\n".join(words).strip()
