"""The worker's side of the questions its running agents ask the owner (`ask_owner`).

A question is a row (board/agent_asks.py); chat, the web and `/answer` answer it, on
any host. The run's tool call waits here for its row to change: on every wake-up of the
worker (a commit here or, on PostgreSQL, on any host; at the latest every poll
interval) `deliver` reads the rows that are waited for and resolves the answered or
closed ones, as approvals are (pipeline/talking.py).
"""

from __future__ import annotations

import asyncio
import logging

from chatbot.board import QuestionRow, StoreError
from chatbot.board.ports import WorkerSide

log = logging.getLogger(__name__)

OPEN = "open"


class OwnerAnswers:
    def __init__(self, board: WorkerSide) -> None:
        self.board = board
        self._waiting: dict[int, asyncio.Future[QuestionRow]] = {}

    @property
    def waiting(self) -> int:
        return len(self._waiting)

    async def deliver(self) -> None:
        """Resolve the waits whose question was answered or closed."""
        if not self._waiting:
            return
        try:
            rows = await self.board.asks.states(list(self._waiting))
        except StoreError as error:
            log.warning("the agents' questions were not read (%s); next wake-up", error)
            return
        for row in rows:
            future = self._waiting.get(row.id)
            if row.state != OPEN and future is not None and not future.done():
                future.set_result(row)

    async def wait(self, question_id: int, timeout_s: float) -> QuestionRow | None:
        """The question's row once it is no longer open; None after `timeout_s`.

        An answer given before this wait began is found on the next wake-up."""
        future: asyncio.Future[QuestionRow] = asyncio.get_running_loop().create_future()
        self._waiting[question_id] = future
        try:
            return await asyncio.wait_for(asyncio.shield(future), timeout_s)
        except TimeoutError:
            return None
        finally:
            self._waiting.pop(question_id, None)
