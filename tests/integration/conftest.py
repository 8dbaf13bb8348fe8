"""Real Prosody and Synapse for the whole session, plus bot and peer factories.

The servers are started once through tests/realservers (the same code as
`scripts/servers`) and stopped at the end. If they cannot start, every test
here fails with the reason: a missing server is never a skip. Set
CHATBOT_SERVERS_JSON to a running `scripts/servers start` to reuse it.
"""

from __future__ import annotations

import asyncio
import os
import time
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from chatbot.transports.base import IncomingEvent, MemoryStateStore, StateStore
from chatbot.transports.matrix.transport import MatrixSettings, MatrixTransport
from chatbot.transports.xmpp.transport import XmppSettings, XmppTransport
from tests.integration.bot_process import LIVE
from tests.integration.waiting import first_matching

# The real CLIs and their scripted providers, for the tests that talk to a working agent.
from tests.realcli.conftest import cli_bins, models  # noqa: F401 - fixtures
from tests.realservers import Servers

from .matrix_peer import MatrixPeer
from .xmpp_peer import XmppPeer

# A bound on awaited events, never a delay: generous for a loaded two-core box (issue 39).
WITHIN = 20.0


@pytest.fixture(scope="session")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Servers:
    reuse = os.environ.get("CHATBOT_SERVERS_JSON")
    if reuse:
        s = Servers(Path(reuse).parent)
        if not all(s.status().values()):
            pytest.fail(
                f"CHATBOT_SERVERS_JSON={reuse} but its servers are not running: {s.status()}",
                pytrace=False,
            )
        yield s
        return
    s = Servers(tmp_path_factory.mktemp("servers"))
    t0 = time.monotonic()
    try:
        s.start()
    except Exception as exc:  # noqa: BLE001 - the reason must reach the report
        pytest.fail(f"could not start the real chat servers: {exc}", pytrace=False)
    print(f"\nreal servers up in {time.monotonic() - t0:.2f}s ({s.timings})")
    yield s
    s.stop()


@pytest.fixture(autouse=True)
async def no_bot_outlives_its_test() -> AsyncIterator[None]:
    """Stop the bot processes a test left running (bot_process.LIVE), after it."""
    yield
    while LIVE:
        await LIVE[-1].stop()


@pytest.fixture
def xmpp_info(servers: Servers) -> dict[str, Any]:
    return servers.info["xmpp"]


@pytest.fixture
def matrix_info(servers: Servers) -> dict[str, Any]:
    return servers.info["matrix"]


def unique(label: str) -> str:
    return f"{label}-{uuid.uuid4().hex[:8]}"


class Inbox:
    """The bot's event handler in tests: collects events, lets a test await one."""

    def __init__(self) -> None:
        self.all: list[IncomingEvent] = []
        self.taken: list[str] = []
        self._queue: asyncio.Queue[IncomingEvent] = asyncio.Queue()

    async def __call__(self, event: IncomingEvent) -> None:
        self.all.append(event)
        self._queue.put_nowait(event)

    async def get(
        self, pred: Callable[[IncomingEvent], bool] = lambda e: True, within: float = WITHIN
    ) -> IncomingEvent:
        return await first_matching(
            self._queue,
            pred,
            within=within,
            who="the bot",
            # getattr: only message events carry text; the others are named by their type
            shown=lambda e: f"{type(e).__name__} {getattr(e, 'text', '')!r:.80}",
            keep=False,
            taken=self.taken,
        )

    async def text(self, text: str, within: float = WITHIN) -> IncomingEvent:
        return await self.get(lambda e: getattr(e, "text", None) == text, within)


def xmpp_settings(info: dict[str, Any], **overrides: Any) -> XmppSettings:
    bot = info["accounts"]["bot"]
    values: dict[str, Any] = {
        "jid": bot["jid"],
        "password": bot["password"],
        "host": info["host"],
        "port": info["port"],
        "tls": "none",
        "nick": "bot",
        "rooms": (info["rooms"]["public"], info["rooms"]["hidden"]),
        "reconnect_initial": 0.05,
        "reconnect_max": 0.5,
    }
    values.update(overrides)
    return XmppSettings(**values)


def matrix_settings(info: dict[str, Any], **overrides: Any) -> MatrixSettings:
    bot = info["accounts"]["bot"]
    values: dict[str, Any] = {
        "homeserver": info["homeserver"],
        "user_id": bot["user_id"],
        "password": bot["password"],
        "rooms": (info["rooms"]["public"]["room_id"],),
        "owners": (info["accounts"]["owner"]["user_id"],),
        "reconnect_initial": 0.05,
        "reconnect_max": 0.5,
    }
    values.update(overrides)
    return MatrixSettings(**values)


class _BotFactory:
    """Starts bot transports of one kind for a test and stops them all afterwards."""

    def __init__(self, kind: type, settings: Callable[..., Any], info: dict[str, Any]) -> None:
        self.kind, self.settings, self.info = kind, settings, info
        self.made: list[Any] = []

    async def __call__(
        self, store: StateStore | None = None, *, online: bool = True, **overrides: Any
    ) -> tuple[Any, Inbox]:
        inbox = Inbox()
        transport = self.kind(
            self.settings(self.info, **overrides), store or MemoryStateStore(), handler=inbox
        )
        self.made.append(transport)
        await transport.start()
        if online:
            await asyncio.wait_for(transport.wait_online(), WITHIN)
        return transport, inbox

    async def stop_all(self) -> None:
        for transport in self.made:
            await transport.stop()


@pytest.fixture
async def xmpp_bot(xmpp_info: dict[str, Any]) -> AsyncIterator[Callable]:
    factory = _BotFactory(XmppTransport, xmpp_settings, xmpp_info)
    yield factory
    await factory.stop_all()


@pytest.fixture
async def xmpp_peer(xmpp_info: dict[str, Any]) -> AsyncIterator[Callable]:
    made: list[XmppPeer] = []

    async def make(account: str = "owner") -> XmppPeer:
        acc = xmpp_info["accounts"][account]
        peer = XmppPeer(acc["jid"], acc["password"], xmpp_info["host"], xmpp_info["port"])
        made.append(peer)
        return await peer.start()

    yield make
    for p in made:
        await p.stop()


@pytest.fixture
async def matrix_bot(matrix_info: dict[str, Any]) -> AsyncIterator[Callable]:
    factory = _BotFactory(MatrixTransport, matrix_settings, matrix_info)
    yield factory
    await factory.stop_all()


@pytest.fixture
async def matrix_peer(matrix_info: dict[str, Any]) -> AsyncIterator[Callable]:
    made: list[MatrixPeer] = []

    async def make(account: str = "owner") -> MatrixPeer:
        acc = matrix_info["accounts"][account]
        peer = MatrixPeer(matrix_info["homeserver"], acc["user_id"], acc["password"])
        made.append(peer)
        return await peer.start()

    yield make
    for p in made:
        await p.stop()
