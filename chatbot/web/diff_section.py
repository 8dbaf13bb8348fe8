"""A card's change on its page: a summary, then each file in a `<details>` (collapsible
without JavaScript), its lines highlighted on the server (Pygments).

Every line is the agent's text: it goes through `visible` (control and format
characters become escapes) and is escaped by our own spans, never by trusting the
lexer's output as markup. Long lines are cut and a long change is shown in part, with
the whole patch offered for download.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from importlib import resources

from pygments.lexer import Lexer
from pygments.lexers import TextLexer, get_lexer_for_filename
from pygments.token import STANDARD_TYPES, _TokenType
from pygments.util import ClassNotFound

from chatbot.board import LineComment
from chatbot.domain.counted import counted
from chatbot.domain.shown import visible
from chatbot.web.markup import Safe, join, tag
from chatbot.web.texts import Texts
from runners.diff_files import CommitDiff, DiffLine, FileChange

# A file with more lines than this is shown closed: the summary stays readable.
OPEN_UP_TO = 400
_KIND = {"+": "add", "-": "del", " ": "ctx", "@": "hunk", "\\": "note"}


def _lexer(path: str) -> Lexer:
    try:
        return get_lexer_for_filename(path, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return TextLexer(stripnl=False, ensurenl=False)


def _styled() -> frozenset[str]:
    """The token classes the stylesheet colours (`.code .k`)."""
    css = (resources.files("chatbot.web") / "static" / "board.css").read_text("utf-8")
    return frozenset(re.findall(r"\.code \.([a-z0-9]+)\b", css))


# Only a token the stylesheet colours gets a span: a name, an operator or a space in
# one costs the browser an element and shows the same, and on a 5,000-line change
# they are two in three of the spans.
STYLED = _styled()


def _css(token: _TokenType) -> str:
    while token not in STANDARD_TYPES and token.parent is not None:
        token = token.parent
    css = STANDARD_TYPES.get(token, "")
    return css if css in STYLED else ""


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


@dataclass(frozen=True)
class Commenting:
    """A signed-in owner's comment form: the session's token, and the line they picked
    (file number, line) from the page's address, if any."""

    csrf: str
    picked: tuple[int, int] | None = None


def _line(line: DiffLine, code: Safe, t: Texts, index: int = 0) -> Safe:
    """One row; its number links to the comment form with it picked (for everyone alike,
    so the section can be kept per commit: a reader's page has no form to fill)."""
    more = counted(line.cut, "more character", t.locale)
    cut = tag('<span class="cut">{m}</span>', m=t("diff_line_cut", n=more))
    number: Safe | str = ""
    if line.number is not None:
        number = tag(
            '<a href="?line={f}:{n}#comment" rel="nofollow">{n}</a>', f=index, n=line.number
        )
    return tag(
        '<tr class="{kind}"><td class="n">{n}</td><td class="s">{sign}</td>'
        '<td class="code">{code}{cut}</td></tr>',
        kind=_KIND[line.kind],
        n=number,
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


def comment_form(slug: str, change: CommitDiff, commenting: Commenting, t: Texts) -> Safe:
    """The owner's one comment form under the change: a file, its lines (the picked ones
    filled in), the words. It works without JavaScript: a line's number reloads the
    page with it picked."""
    picked_file, picked_line = commenting.picked or (-1, None)
    options = [
        tag(
            '<option value="{path}"{selected}>{shown}</option>',
            path=found.path,
            selected=Safe(" selected") if index == picked_file else Safe(""),
            shown=visible(found.path),
        )
        for index, found in enumerate(change.files)
        if not found.binary
    ]
    if not options:
        return Safe("")
    line = "" if picked_line is None else str(picked_line)
    return tag(
        '<form method="post" action="/card/{slug}/act" class="comment" id="comment">'
        '<input type="hidden" name="csrf" value="{csrf}">'
        '<input type="hidden" name="action" value="comment">'
        '<input type="hidden" name="commit" value="{commit}">'
        '<label>{file} <select name="path">{options}</select></label> '
        '<label>{first} <input name="start" inputmode="numeric" size="5" value="{line}">'
        "</label> "
        '<label>{last} <input name="end" inputmode="numeric" size="5" value="{line}">'
        "</label>"
        '<textarea name="text" rows="3" maxlength="2000" required placeholder="{hint}">'
        '</textarea><button type="submit">{send}</button></form>',
        slug=slug,
        csrf=commenting.csrf,
        commit=change.commit,
        file=t("comment_file"),
        options=join(options),
        first=t("comment_from"),
        last=t("comment_to"),
        line=line,
        hint=t("comment_hint"),
        send=t("comment_send"),
    )


def _file(found: FileChange, t: Texts, index: int = 0) -> Safe:
    rows: list[Safe] = []
    if found.lines:
        codes = highlighted(found.path, [line.text for line in found.lines])
        rows = [_line(line, code, t, index) for line, code in zip(found.lines, codes, strict=True)]
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
        '<details class="file" id="file-{i}"{open}><summary><code>{path}</code> {what} '
        '<span class="stat"><span class="plus">+{a}</span> <span class="minus">-{r}</span>'
        "</span></summary>{body}{left}</details>",
        i=index,
        open=Safe(" open") if len(found.lines) <= OPEN_UP_TO else Safe(""),
        path=visible(found.path),
        what=_what(found, t),
        a=found.added,
        r=found.removed,
        body=body,
        left=left,
    )


def change_section(change: CommitDiff, slug: str, t: Texts) -> Safe:
    """The section as the commit decides it, the same for everyone who looks."""
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
        files=join(_file(found, t, index) for index, found in enumerate(change.files)),
    )


def comments_list(comments: Sequence[LineComment], t: Texts) -> Safe:
    """Every comment of the card and where it stands: open, with an agent, answered."""
    if not comments:
        return Safe("")
    items = []
    for comment in comments:
        if comment.state == "answered":
            state = t("comment_answered", commit=(comment.answered_commit or "")[:12])
        else:
            state = t(f"comment_{comment.state}")
        quote = Safe("")
        if comment.quote:
            quote = tag('<pre class="quote"><code>{q}</code></pre>', q=visible(comment.quote))
        items.append(
            tag(
                '<li class="comment {css}" id="c{id}"><p><code>{where}</code> · {by} · '
                '<span class="state">{state}</span></p>{quote}<p class="body">{body}</p></li>',
                css=comment.state,
                id=comment.id,
                where=visible(comment.where),
                by=comment.author,
                state=state,
                quote=quote,
                body=visible(comment.body),
            )
        )
    return tag(
        '<section id="comments"><h3>{h}</h3><ol class="comments">{items}</ol></section>',
        h=t("comments"),
        items=join(items),
    )
