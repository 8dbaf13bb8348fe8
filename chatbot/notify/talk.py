"""What the rooms are told about talking to running agents: approval requests and
their ends, steers an agent could not take.

An agent's command is its own text: untrusted. It is shown as inert text: control
characters as visible escapes, inside a code fence longer than any run of backticks
in it (so no markdown, link or mention in it is rendered), every `@` followed by a
zero-width space (so no client takes it for a mention), cut for a phone with the
full text on the card's web page.
"""

from __future__ import annotations

from chatbot.board import Card, TalkRow
from chatbot.notify.format import SHOWN_CHARS, duration, inert
from chatbot.notify.poster import Poster


class TalkNotices:
    def __init__(self, notifier: Poster, approval_timeout_s: float = 900.0):
        self.notifier = notifier
        self.approval_timeout_s = approval_timeout_s

    async def approval_asked(self, card: Card, row: TalkRow, why: str) -> None:
        t = self.notifier.t
        body = t(
            "approval_asked",
            slug=card.slug,
            tool=row.tool or "command",
            command=inert(row.text),
            cwd=inert(row.cwd or "-", 200),
            timeout=duration(self.approval_timeout_s),
        )
        if why:
            body += "\n" + t("approval_reason", reason=inert(why, 200))
        if len(row.text) > SHOWN_CHARS:
            body += "\n" + t("approval_full_text", slug=card.slug)
        async with self.notifier.store.transaction() as db:
            await self.notifier.post(
                db, body, card=card, purpose="approval", mention_owners=True, talk_id=row.id
            )

    async def approval_timed_out(self, card: Card, row: TalkRow, why: str) -> None:
        await self._say(card, "approval_timed_out", row, why)

    async def approval_flood(self, card: Card, row: TalkRow, why: str) -> None:
        await self._say(card, "approval_flood", row, why)

    async def steer_refused(self, card: Card, row: TalkRow, why: str) -> None:
        await self._say(card, "steer_refused", row, why)

    async def _say(self, card: Card, key: str, row: TalkRow, why: str) -> None:
        body = self.notifier.t(
            key, slug=card.slug, command=inert(row.text, 120), why=why, who=row.actor or "-"
        )
        async with self.notifier.store.transaction() as db:
            await self.notifier.post(db, body, card=card, purpose="approval_end", talk_id=row.id)
