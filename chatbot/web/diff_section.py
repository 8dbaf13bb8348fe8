"""A card's change on its page: a summary, then each file in a `<details>` (collapsible
without JavaScript), its lines highlighted on the server (Pygments).

Every line is the agent's text: it goes through `visible` (control and format
characters become escapes) and is escaped by our own spans, never by trusting the
lexer's output as markup. Long lines are cut and a long change is shown in part, with
the whole patch offered for download.
"""

from __future__ import annotations

import html
from collections.abc import Iterator

from pygments.lexer import Lexer
from pygments.lexers import TextLexer, get_lexer_for_filename
from pygments.token import STANDARD_TYPES, _TokenType
from pygments.util import ClassNotFound

from chatbot.domain.counted import counted
from chatbot.domain.shown import visible
from chatbot.web.markup import Safe, join, tag
from chatbot.web.texts import Texts
from runners.diff_files import Change, DiffLine, FileChange

# A file with more lines than this is shown closed: the summary stays readable.
OPEN_UP_TO = 400
_KIND = {"+": "add", "-": "del", " ": "ctx", "@": "hunk", "\\": "note"}


def _lexer(path: str) -> Lexer:
    try:
        return get_lexer_for_filename(path, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return TextLexer(stripnl=False, ensurenl=False)


def _css(token: _TokenType) -> str:
    while token not in STANDARD_TYPES and token.parent is not None:
        token = token.parent
    return STANDARD_TYPES.get(token, "")


def highlighted(path: str, lines: list[str]) -> Iterator[Safe]:
    """Each of `lines` as escaped HTML with token spans; the lexer reads them as one text,
    so a string or comment over several lines keeps its colour."""
    text = "\n".join(visible(line) for line in lines)
    current: list[str] = []
    for token, value in _lexer(path).get_tokens(text):
        css = _css(token)
        for number, part in enumerate(value.split("\n")):
            if number:
                yield Safe("".join(current))
                current = []
            if part:
                escaped = html.escape(part, quote=True)
                current.append(f'<span class="{css}">{escaped}</span>' if css else escaped)
    yield Safe("".join(current))


def _line(line: DiffLine, code: Safe, t: Texts) -> Safe:
    more = counted(line.cut, "more character", t.locale)
    cut = tag('<span class="cut">{m}</span>', m=t("diff_line_cut", n=more))
    return tag(
        '<tr class="{kind}"><td class="n">{n}</td><td class="s">{sign}</td>'
        '<td class="code">{code}{cut}</td></tr>',
        kind=_KIND[line.kind],
        n="" if line.number is None else line.number,
        sign="" if line.kind in ("@", "\\") else line.kind,
        code=code,
        cut=cut if line.cut else Safe(""),
    )


def _what(found: FileChange, t: Texts) -> Safe:
    said = []
    if found.status == "added":
        said.append(t("diff_added"))
    elif found.status == "deleted":
        said.append(t("diff_deleted"))
    elif found.status in ("renamed", "copied") and found.old_path:
        said.append(t(f"diff_{found.status}", old=visible(found.old_path)))
    if found.old_mode and found.new_mode and found.old_mode != found.new_mode:
        said.append(t("diff_mode", old=found.old_mode, new=found.new_mode))
    if found.binary:
        said.append(t("diff_binary"))
    return join((tag('<span class="what">{w}</span>', w=w) for w in said), " ")


def _file(found: FileChange, t: Texts) -> Safe:
    rows: list[Safe] = []
    if found.lines:
        codes = highlighted(found.path, [line.text for line in found.lines])
        rows = [_line(line, code, t) for line, code in zip(found.lines, codes, strict=True)]
    left = Safe("")
    if found.lines_left:
        more = counted(found.lines_left, "more line", t.locale)
        left = tag('<p class="cut">{m}</p>', m=t("diff_lines_left", n=more))
    body = (
        tag('<table class="diff">{rows}</table>', rows=join(rows))
        if rows
        else tag('<p class="none">{m}</p>', m=t("diff_no_lines"))
    )
    return tag(
        '<details class="file"{open}><summary><code>{path}</code> {what} '
        '<span class="stat"><span class="plus">+{a}</span> <span class="minus">-{r}</span>'
        "</span></summary>{body}{left}</details>",
        open=Safe(" open") if len(found.lines) <= OPEN_UP_TO else Safe(""),
        path=visible(found.path),
        what=_what(found, t),
        a=found.added,
        r=found.removed,
        body=body,
        left=left,
    )


def change_section(change: Change, slug: str, t: Texts) -> Safe:
    added = sum(f.added for f in change.files)
    removed = sum(f.removed for f in change.files)
    cut = any(f.lines_left for f in change.files) or change.cut
    note = tag('<p class="cut">{m}</p>', m=t("diff_partial")) if cut else Safe("")
    return tag(
        '<section id="change"><h2>{h}</h2><p class="summary">{summary} '
        '<a href="/card/{slug}/patch" download>{download}</a></p>{note}{files}</section>',
        h=t("change"),
        summary=t(
            "diff_summary",
            files=counted(len(change.files), "file", t.locale),
            added=added,
            removed=removed,
            commit=change.commit[:12],
        ),
        slug=slug,
        download=t("diff_download"),
        note=note,
        files=join(_file(found, t) for found in change.files),
    )
