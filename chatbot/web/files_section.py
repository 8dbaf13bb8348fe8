"""A card's files on its page: a table of names, kinds, sizes, senders and times.

Names come from senders: they are escaped text, never a link or markup, and no picture
is shown inline (its bytes would be the sender's markup for the browser to decode).
"""

from __future__ import annotations

from collections.abc import Sequence

from chatbot.board import Attachment
from chatbot.board.file_names import size_words
from chatbot.web.markup import Safe, labelled_row, moment, scroll_table, tag
from chatbot.web.texts import Texts


def files_section(files: Sequence[Attachment], t: Texts) -> Safe:
    """The "Attachments" section; nothing for a card without files."""
    if not files:
        return Safe("")
    heads = [t(key) for key in ("col_file", "col_kind", "col_size", "col_actor", "col_when")]
    heads.append(t("col_file_for"))
    rows = []
    for file in files:
        purpose = t(f"file_for_{file.purpose or 'loose'}")
        if file.gone:
            purpose += f" — {t('file_gone')}"
        cells = (
            file.name,
            t(f"file_kind_{file.kind.value}"),
            size_words(file.size),
            file.actor or t("file_by_bot"),
            moment(file.created_at),
            purpose,
        )
        rows.append(labelled_row(heads, cells))
    return tag(
        '<section id="attachments"><h2>{h}</h2>{table}</section>',
        h=t("attachments"),
        table=scroll_table("attachments", heads, rows),
    )
