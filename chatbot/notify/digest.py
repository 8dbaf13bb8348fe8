"""The daily digest: at `[bot] digest_at` one message to every room with what moved
since the last one, what waits (the inbox's count and its oldest), the spend and the
failures.

It mentions nobody, so quiet hours do not hold it. The day it was last sent is kept
in the database and claimed in the transaction that writes its posts: a restart
neither sends it twice nor skips it (down at its time, it comes at the start the same
day), and of several bot processes on one database one sends it. The loop sleeps
until the next one is due; `tick(now)` is one look at a given time, so tests drive
it with any clock.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from datetime import datetime
from datetime import time as clock_time

from chatbot.board import BoardService
from chatbot.board import digest as board_digest
from chatbot.board.digest import Facts, Failure
from chatbot.board.inbox import InboxItem, InboxKind
from chatbot.domain import daily
from chatbot.domain.counted import counted
from chatbot.domain.phases import Phase
from chatbot.notify.format import MAX_POST_CHARS, commands_with, cut, duration, one_line, usd
from chatbot.notify.notifier import Notifier
from chatbot.store import Db

log = logging.getLogger(__name__)

DAY_S = 86400.0
#: The longest sleep: a clock set forward (or a suspended host) is noticed within it.
MAX_SLEEP_S = 3600.0
#: After a failed look (the database away), the next one.
RETRY_S = 300.0
#: How many cards a line names before "and N more".
LISTED = 8
PURPOSE = "digest"

Sleep = Callable[[float, asyncio.Event], Awaitable[None]]


async def _sleep(seconds: float, stop: asyncio.Event) -> None:
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(seconds):
            await stop.wait()


class Digest:
    def __init__(
        self,
        notifier: Notifier,
        board: BoardService,
        at: clock_time,
        *,
        clock: Callable[[], float] = time.time,
        sleep: Sleep = _sleep,
    ):
        self.notifier = notifier
        self.board = board
        self.at = at
        self.clock = clock
        self.sleep = sleep

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            now = self.clock()
            try:
                due = await self.tick(now)
            except Exception:  # noqa: BLE001 - a failed look must not end the bot
                log.exception("digest: the look failed; the next one tries again")
                due = now + RETRY_S
            await self.sleep(min(max(due - now, 0.0), MAX_SLEEP_S), stop)

    async def tick(self, now: float) -> float:
        """Send the digest if it is due at `now`; when the next one is due."""
        last = await board_digest.last(self.board)
        due = daily.due_at(self.at, last.day, now)
        if due > now:
            return due
        await self.send(now, last)
        return daily.due_at(self.at, daily.day_of(now), now)

    async def send(self, now: float, last: board_digest.Last | None = None) -> int:
        """Today's digest, unless it was sent: the number of posts written."""
        last = last or await board_digest.last(self.board)
        # The first digest covers the day before it.
        since = last.at if last.at is not None else now - DAY_S
        body = self.render(await board_digest.facts(self.board, since, now), now)

        async def write(db: Db) -> int:
            return len(await self.notifier.post(db, body, card=None, purpose=PURPOSE))

        sent = await board_digest.send_once(self.board, daily.day_of(now), now, write)
        if sent is None:
            log.info("digest: today's was sent already (by another process, or before a restart)")
        return sent or 0

    # --- the words ---------------------------------------------------------------

    def render(self, facts: Facts, now: float) -> str:
        t = self.notifier.t
        since = _local(facts.since)
        if facts.quiet:
            return self._body(t("digest_quiet", since=since))
        lines = [t("digest_head", since=since)]
        if facts.moves:
            moves, cards = self._counted(facts.moves, "move"), self._counted(facts.cards, "card")
            lines.append(t("digest_moved", moves=moves, cards=cards))
            if facts.finished:
                names = [f"{slug} ({self._phase(phase)})" for slug, phase in facts.finished]
                lines.append(t("digest_finished", cards=self._listed(names)))
            if facts.started:
                lines.append(t("digest_started", cards=self._listed(list(facts.started))))
        else:
            lines.append(t("digest_still"))
        if facts.waiting:
            oldest = facts.waiting[0]
            age = duration(now - oldest.at)
            item = self._waiting(oldest)
            lines.append(t("digest_waits", count=len(facts.waiting), age=age, item=item))
        else:
            lines.append(t("digest_no_waits"))
        if facts.spend.runs or facts.day is not None:
            runs = self._counted(facts.spend.runs, "run")
            line = t("digest_spend", usd=usd(facts.spend.usd), runs=runs)
            if not facts.spend.runs:
                line = t("digest_no_spend")
            if (day := facts.day) is not None:
                key = "digest_today_spent" if day.reached else "digest_today"
                line += t(key, spent=usd(day.spent), limit=usd(day.limit))
            lines.append(line)
        if facts.failures:
            lines.append(t("digest_failures", count=self._counted(len(facts.failures), "card")))
            lines += [self._failure(f) for f in facts.failures[:LISTED]]
            if len(facts.failures) > LISTED:
                lines.append(t("digest_more", count=len(facts.failures) - LISTED))
        return self._body("\n".join(lines))

    def _listed(self, names: list[str]) -> str:
        shown = ", ".join(names[:LISTED])
        if len(names) > LISTED:
            shown += " " + self.notifier.t("digest_more", count=len(names) - LISTED)
        return shown

    def _waiting(self, item: InboxItem) -> str:
        fields = {
            "slug": item.slug or "-",
            "text": one_line(item.text, 80),
            "ways": ", ".join(item.ways),
            "until": _local(item.until) if item.until else "-",
        }
        if item.kind == InboxKind.REQUEST:
            return self.notifier.t(
                "digest_wait_request", id=item.request_id, requester=item.requester, **fields
            )
        return self.notifier.t(f"digest_wait_{item.kind}", **fields)

    def _failure(self, failure: Failure) -> str:
        detail = f": {one_line(failure.detail, 100)}" if failure.detail else ""
        fields = {"slug": failure.slug, "stage": failure.stage, "detail": detail}
        if failure.ways:
            return self.notifier.t("digest_failure", ways=", ".join(failure.ways), **fields)
        return self.notifier.t("digest_failure_on", phase=self._phase(failure.phase), **fields)

    def _phase(self, phase: Phase) -> str:
        return phase.label(self.notifier.locale)

    def _counted(self, count: int, noun: str) -> str:
        return counted(count, noun, self.notifier.locale)

    def _body(self, body: str) -> str:
        n = self.notifier
        return cut(commands_with(body, n.prefix, n.command_names), MAX_POST_CHARS, " …")


def _local(at: float) -> str:
    """A moment in the bot's local time, as digest_at is written."""
    return datetime.fromtimestamp(at).strftime("%Y-%m-%d %H:%M")
