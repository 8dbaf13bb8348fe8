"""A card's files as `/status <slug>` and `chatbot card` list them: one line each, with
its name, kind, size, who sent it, when, and what it went with; a file the quota
dropped says so."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from chatbot.board import Attachment
from chatbot.board.file_names import size_words
from chatbot.chat.texts import say

#: Files listed in chat; the rest are counted (the web page and --json list them all).
SHOWN = 10


def card_files(files: Sequence[Attachment], locale: str, shown: int | None = SHOWN) -> list[str]:
    if not files:
        return []
    lines = [say(locale, "card_files")]
    listed = files if shown is None else files[:shown]
    for file in listed:
        who = (
            say(locale, "file_from", who=file.actor) if file.actor else say(locale, "file_from_bot")
        )
        lines.append(
            say(
                locale,
                "card_file_gone" if file.gone else "card_file",
                name=file.name,
                kind=say(locale, f"file_kind_{file.kind.value}"),
                size=size_words(file.size),
                who=who,
                at=datetime.fromtimestamp(file.created_at, UTC).strftime("%Y-%m-%d %H:%M UTC"),
                purpose=say(locale, f"file_for_{file.purpose or 'loose'}"),
            )
        )
    if len(files) > len(listed):
        lines.append(say(locale, "card_files_more", count=len(files) - len(listed)))
    return lines
