"""Live pages: board changes to every open page as server-sent events.

The store's commit hook wakes the hub (`wake`); the hub asks the board what
changed since each page's change mark and sends it. A page's mark travels as the
event id, so after a restart the browser's reconnect (`Last-Event-ID`) is told
exactly what it missed. Commits by another process (the CLI next to the bot) do
not fire this process's hook; a slow look every few seconds catches those, as the
worker does.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from chatbot.board.reads import BoardReads
from chatbot.board.web_reads import BoardCard, ChangeMark, WebReads
from chatbot.web.groups import Group, group_counts, group_of

log = logging.getLogger(__name__)

# Wait this long for a wake-up before looking anyway (other processes' commits).
FALLBACK_S = 5.0
# More changed cards than this and the page is told to read itself again instead.
MAX_CARDS_PER_EVENT = 300
# Events a slow page may have waiting before it is dropped (it reconnects and catches up).
QUEUE_SIZE = 64
# How soon a browser reconnects after the stream ended (a restart), in ms.
RETRY_MS = 1000

VIEWS = ("board", "card", "runs")


@dataclass(eq=False)
class Client:
    view: str
    mark: ChangeMark | None
    queue: asyncio.Queue[bytes | None] = field(default_factory=lambda: asyncio.Queue(QUEUE_SIZE))

    def send(self, message: bytes | None) -> bool:
        """Queue a message; False when the page is too far behind (it is then dropped)."""
        try:
            self.queue.put_nowait(message)
        except asyncio.QueueFull:
            return False
        return True

    def close(self) -> None:
        while not self.queue.empty():
            self.queue.get_nowait()
        self.queue.put_nowait(None)


def event(mark: ChangeMark, payload: dict[str, Any]) -> bytes:
    data = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
    return f"id: {mark.token()}\nevent: change\ndata: {data}\n\n".encode()


@dataclass(frozen=True)
class Counts:
    """Each group's count (waiting: the inbox's items) and how many cards there are."""

    groups: dict[Group, int]
    cards: int


class Live:
    def __init__(
        self,
        reads: BoardReads,
        web: WebReads,
        render: Callable[[BoardCard], str],
        render_requests: Callable[[int], str] = str,
    ):
        self._reads = reads
        self._web = web
        self._render = render
        self._render_requests = render_requests
        self._wake = asyncio.Event()
        self._clients: set[Client] = set()
        self._counts: tuple[ChangeMark, Counts] | None = None

    def wake(self) -> None:
        """The store's commit hook: cheap, synchronous, called after every commit."""
        self._wake.set()

    @property
    def clients(self) -> int:
        return len(self._clients)

    def join(self, view: str, since: str | None) -> Client:
        mark = ChangeMark.parse(since) if since else None
        client = Client(view if view in VIEWS else "board", mark)
        self._clients.add(client)
        self._wake.set()  # catch it up with what happened since its mark
        return client

    def leave(self, client: Client) -> None:
        self._clients.discard(client)

    def drop(self, client: Client) -> None:
        """The page is gone: it leaves now, and its stream ends."""
        self.leave(client)
        client.close()

    def close(self) -> None:
        for client in self._clients:
            client.close()
        self._clients.clear()

    async def run(self, stop: asyncio.Event) -> None:
        stopped = asyncio.ensure_future(stop.wait())
        try:
            while not stop.is_set():
                woken = asyncio.ensure_future(self._wake.wait())
                await asyncio.wait(
                    {woken, stopped}, timeout=FALLBACK_S, return_when=asyncio.FIRST_COMPLETED
                )
                woken.cancel()
                self._wake.clear()
                if stop.is_set() or not self._clients:
                    continue
                try:
                    await self.publish()
                except Exception:  # noqa: BLE001 - a failed look must not end live pages
                    log.exception("live board: reading the changes failed; trying again")
        finally:
            stopped.cancel()
            self.close()

    async def counts(self, mark: ChangeMark) -> dict[Group, int]:
        return (await self.counted(mark)).groups

    async def counted(self, mark: ChangeMark) -> Counts:
        """Cards per group as of `mark`: counted once per change of the board (a walk
        over the phase index, some milliseconds at 100,000 cards, and the few cards that
        may wait for an owner), then kept. What waits changes with questions, jobs and
        approvals too: any change of the mark counts again."""
        if self._counts is None or self._counts[0] != mark:
            phases = await self._web.phase_counts()
            waiting, items = await self._web.waiting_counts()
            found = Counts(group_counts(phases, waiting, items), sum(phases.values()))
            self._counts = (mark, found)
        return self._counts[1]

    async def publish(self) -> None:
        """Send every page what changed since its mark, one query per distinct mark."""
        mark = await self._web.change_mark()
        groups: dict[ChangeMark | None, list[Client]] = {}
        for client in self._clients:
            if client.mark != mark:
                groups.setdefault(client.mark, []).append(client)
        board: dict[str, Any] = {}
        if any(c.view == "board" for clients in groups.values() for c in clients):
            # The board's columns show a few of many cards: their counts come from here.
            counted = await self.counted(mark)
            board["counts"] = {group.value: n for group, n in counted.groups.items()}
            board["total"] = counted.cards
        requests: str | None = None
        for since, clients in groups.items():
            if since is None:
                # A page without a mark we understand reads itself again.
                messages = {view: event(mark, {"reload": True}) for view in VIEWS}
            else:
                cards = await self._web.changed_cards(since)
                extra = board
                if board and mark.requests_differ(since):
                    # Requests are no cards: the board's line about them comes whole.
                    if requests is None:
                        pending = await self._reads.pending_requests()
                        requests = self._render_requests(len(pending))
                    extra = {**board, "requests": requests}
                messages = self._messages(mark, since, cards, extra)
            for client in clients:
                client.mark = mark
                if not client.send(messages[client.view]):
                    log.info("live board: a page fell behind; it reconnects and catches up")
                    self.leave(client)
                    client.close()

    def _messages(
        self,
        mark: ChangeMark,
        since: ChangeMark,
        cards: list[BoardCard],
        extra: dict[str, Any],
    ) -> dict[str, bytes]:
        """`extra`: what a board page gets besides the cards (counts, total, requests)."""
        jobs = mark.jobs_differ(since)
        slugs = [card.slug for card in cards]
        if len(cards) > MAX_CARDS_PER_EVENT:
            board: dict[str, Any] = {"reload": True}
        else:
            board = {
                "cards": [
                    {"slug": c.slug, "group": group_of(c).value, "html": self._render(c)}
                    for c in cards
                ],
                "jobs": jobs,
                "counts": None,
                **extra,
            }
        light = {"slugs": slugs, "jobs": jobs}
        return {
            "board": event(mark, board),
            "card": event(mark, light),
            "runs": event(mark, light),
        }


async def stream(
    live: Live, client: Client, write: Callable[[bytes], Any], keepalive_s: float
) -> None:
    """Write a client's events until it leaves or the hub closes it."""
    try:
        await write(f"retry: {RETRY_MS}\n\n".encode())
        while True:
            try:
                message = await asyncio.wait_for(client.queue.get(), keepalive_s)
            except TimeoutError:
                message = b": keep-alive\n\n"  # proxies close silent connections
            if message is None:
                return
            await write(message)
    except (ConnectionResetError, ConnectionError):
        return
    finally:
        live.leave(client)
