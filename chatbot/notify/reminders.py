"""Reminders of what waits for the owners, and the end of quiet hours.

A question, request or approval unanswered for `remind_after_s` is posted again as
a reply to the message that asked it, mentioning the room's owners; then at most
once every `every_s` (a day). In quiet hours nobody is mentioned: a reminder that
falls due then, and a question or approval asked then (the notifier holds its
mention), wait; the first pass after quiet hours posts one message per room that
names them all and mentions the owners.

`remind(now)` is one pass at a given time, so tests drive it with any clock; `run`
calls it every `interval_s` with the real one.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable

from chatbot.domain.quiet import QuietHours
from chatbot.notify.format import MAX_POST_CHARS, commands_with, cut, duration, html_for, inert
from chatbot.notify.notifier import Destination, Notifier
from chatbot.store import Db
from chatbot.store import chat as chat_store
from chatbot.store import reminders as store
from chatbot.store.questions import AGENT
from chatbot.store.reminders import Waiting

log = logging.getLogger(__name__)

DAY_S = 86400.0
INTERVAL_S = 60.0
MAX_LINE = 300
_LINKS = {store.QUESTION: "question_id", store.REQUEST: "request_id", store.APPROVAL: "talk_id"}


class Reminders:
    def __init__(
        self,
        notifier: Notifier,
        remind_after_s: float,
        quiet: QuietHours | None = None,
        *,
        every_s: float = DAY_S,
        clock: Callable[[], float] = time.time,
    ):
        self.notifier = notifier
        self.store = notifier.store
        self.remind_after_s = remind_after_s
        self.quiet = quiet
        self.every_s = every_s
        self.clock = clock

    async def run(self, stop: asyncio.Event, interval_s: float = INTERVAL_S) -> None:
        while not stop.is_set():
            try:
                await self.remind(self.clock())
            except Exception:  # noqa: BLE001 - a failed pass must not end the bot
                log.exception("reminders: the pass failed; the next one tries again")
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(interval_s):
                    await stop.wait()

    async def remind(self, now: float) -> int:
        """One pass at `now`: the number of messages it wrote into the outbox."""
        quiet = self.quiet is not None and self.quiet.is_quiet(now)
        items = await store.waiting(self.store.reader)
        held = [item for item in items if item.held_since is not None]
        posted = 0 if quiet or not held else await self._digest(now, held)
        for item in items:
            if item.due_at(self.remind_after_s, self.every_s) > now:
                continue
            if not quiet and item.held_since is not None:
                continue  # the digest named it just now
            async with self.store.transaction() as db:
                # Read open in the transaction that records the reminder: an answer
                # that came first means no reminder.
                if not await store.is_open(db, item.subject, item.id):
                    continue
                if quiet:
                    await store.hold(db, item.subject, item.id, now)
                    continue
                posted += await self._reply(db, item, now)
        return posted

    async def _reply(self, db: Db, item: Waiting, now: float) -> int:
        originals = await store.originals(db, item.subject, item.id)
        if not originals:
            return 0  # not sent yet (its room is away); a later pass replies to it
        body = self._line(item, now)
        for original in originals:
            where = self._destination(original.transport, original.room)
            kind = original.target_kind or (where.kind if where else "room")
            await chat_store.enqueue(
                db,
                chat_store.Post(
                    transport=original.transport,
                    target=original.room,
                    target_kind=kind,
                    text=body,
                    html=html_for(original.transport, body),
                    reply_to=original.message_id,
                    purpose="reminder",
                    mentions=where.owners if where and kind == "room" else (),
                    # A reply or reaction to the reminder answers like one to the original.
                    card_id=original.card_id,
                    **{_LINKS[item.subject]: item.id},
                ),
            )
        await store.reminded(db, item.subject, item.id, now)
        return len(originals)

    async def _digest(self, now: float, held: list[Waiting]) -> int:
        """After quiet hours: one message per room with what waited, mentioning owners."""
        async with self.store.transaction() as db:
            lines = []
            for item in held:
                if not await store.is_open(db, item.subject, item.id):
                    continue
                lines.append("- " + self._line(item, now))
                if item.due_at(self.remind_after_s, self.every_s) <= now:
                    await store.reminded(db, item.subject, item.id, now)
                else:
                    await store.rung(db, item.subject, item.id, now)
            if not lines:
                return 0
            head = self.notifier.t("quiet_digest", count=len(lines))
            body = self._body(head + "\n" + "\n".join(lines))
            # Not Notifier.post: that decides quiet hours by its own clock, and this pass
            # has decided them at `now` (the first pass after they ended mentions).
            for where in self.notifier.destinations:
                await chat_store.enqueue(
                    db,
                    chat_store.Post(
                        transport=where.transport,
                        target=where.room,
                        target_kind=where.kind,
                        text=body,
                        html=html_for(where.transport, body),
                        purpose="reminder",
                        mentions=where.owners if where.kind == "room" else (),
                    ),
                )
            return len(self.notifier.destinations)

    def _line(self, item: Waiting, now: float) -> str:
        # An agent's command is untrusted text: shown inert, like in the request itself.
        agent = item.question_kind == AGENT
        if item.subject == store.APPROVAL or agent:
            text = inert(item.text, MAX_LINE)
        else:
            text = cut(item.text, MAX_LINE, " …")
        key = f"reminder_{item.subject}"
        if item.question_kind == "split_plan":
            key = "reminder_split_plan"
        elif agent:
            key = "reminder_agent"
        return self._body(
            self.notifier.t(
                key,
                slug=item.slug,
                id=item.id,
                text=text,
                waited=duration(now - item.created_at),
            )
        )

    def _body(self, body: str) -> str:
        n = self.notifier
        return cut(commands_with(body, n.prefix, n.command_names), MAX_POST_CHARS, " …")

    def _destination(self, transport: str, room: str) -> Destination | None:
        for where in self.notifier.destinations:
            if (where.transport, where.room) == (transport, room):
                return where
        return None
