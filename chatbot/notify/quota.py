"""The room hears of a provider's spent quota or rate limit once per runtime and outage.

Cards hit by the same outage are not each a notice: the first limited run of a runtime
is told, the rest are quiet until a run of that runtime that started after the notice
ends well (the outage is over; a run already under way when the limit came may finish
on an answer it had before, and proves nothing); the next limit after that is a new
outage, told again. The memory is the process's:
after a restart the first limited run is told once more.
"""

from __future__ import annotations

import time

from chatbot.board import Card, RunRecord
from chatbot.notify.poster import Poster
from runners.runtimes import Limited


class QuotaNotices:
    def __init__(self, notifier: Poster) -> None:
        self.notifier = notifier
        #: runtime -> when its outage was told
        self.told: dict[str, float] = {}

    async def limited(
        self, card: Card, runtime: str, limited: Limited, fell_back: bool, at: float | None
    ) -> None:
        if runtime in self.told:
            return
        self.told[runtime] = time.time()
        n = self.notifier
        if fell_back:
            body = n.t("quota_fallback", runtime=runtime, slug=card.slug, reason=limited.reason)
        else:
            when = time.strftime("%Y-%m-%d %H:%M", time.localtime(at or time.time()))
            body = n.t(
                "quota_wait", runtime=runtime, slug=card.slug, reason=limited.reason, when=when
            )
        async with n.store.transaction() as db:
            await n.post(db, body, card=None, purpose="quota")

    def finished(self, record: RunRecord) -> None:
        told_at = self.told.get(record.runtime)
        if told_at is not None and record.outcome == "ok" and record.created_at >= told_at:
            del self.told[record.runtime]
