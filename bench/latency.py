"""Owner -> bot -> owner latency through the transport layer vs a bare echo client.

Over the real Prosody and Synapse (started here unless --servers names a
running `scripts/servers` description), an owner client sends N messages one
at a time and waits for each answer. The bot is first a bare slixmpp / nio
echo client, then the transport layer (XmppTransport / MatrixTransport with
an echoing handler, processed-id bookkeeping included), in the same run.
Prints median and p99 and the ratio; asserts nothing (target: the transport
adds less than 25% at p99).

    .venv/bin/python bench/latency.py [--count 500] [--only xmpp|matrix]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import math
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import slixmpp  # noqa: E402
from nio import AsyncClient, RoomMessageText, SyncResponse  # noqa: E402
from slixmpp import JID  # noqa: E402

from chatbot.transports.base import IncomingEvent, IncomingMessage, MemoryStateStore  # noqa: E402
from chatbot.transports.matrix import MatrixSettings, MatrixTransport  # noqa: E402
from chatbot.transports.xmpp import XmppSettings, XmppTransport  # noqa: E402
from chatbot.transports.xmpp_connection import shutdown  # noqa: E402
from tests.integration.matrix_peer import MatrixPeer  # noqa: E402
from tests.integration.sqlite_store import SqliteStateStore  # noqa: E402
from tests.realservers import Servers, load_info  # noqa: E402
from tests.realservers.xmpp_setup import plain_tcp_client  # noqa: E402

WARMUP = 20
Probe = Callable[[str], Awaitable[None]]


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


async def measure(probes: dict[str, Probe], count: int) -> dict[str, list[float]]:
    """Ping each bot in turn, alternating who goes first, so that machine noise
    (this is a shared 2-core box) falls on both sides alike."""
    names = list(probes)
    for i in range(WARMUP):
        for name in names:
            await probes[name](f"warm-{i}-{uuid.uuid4().hex[:6]}")
    out: dict[str, list[float]] = {name: [] for name in names}
    for i in range(count):
        for name in names if i % 2 == 0 else reversed(names):
            text = f"ping-{i}-{uuid.uuid4().hex[:6]}"
            t0 = time.perf_counter()
            await probes[name](text)
            out[name].append((time.perf_counter() - t0) * 1000)
    return out


def report(title: str, count: int, bare: list[float], layer: list[float]) -> None:
    bm, bp = statistics.median(bare), pct(bare, 0.99)
    lm, lp = statistics.median(layer), pct(layer, 0.99)
    print(f"\n{title}, {count} messages (owner -> bot -> owner)")
    print(f"  {'':26}{'median ms':>10}{'p99 ms':>10}")
    print(f"  {'bare echo client':26}{bm:10.2f}{bp:10.2f}")
    print(f"  {'transport layer':26}{lm:10.2f}{lp:10.2f}")
    verdict = "ok" if lp / bp < 1.25 else "ABOVE TARGET"
    print(
        f"  {'ratio transport/bare':26}{lm / bm:9.2f}x{lp / bp:9.2f}x"
        f"   (target p99 < 1.25x: {verdict})"
    )


# -- XMPP ---------------------------------------------------------------------
#
# Both bots run at once as two resources of the bot account (direct chat goes
# to each full JID) and in two rooms (so neither echoes the other).

BARE_RESOURCE, LAYER_RESOURCE = "bare-echo", "transport"


class XmppOwner:
    """Sends one message and waits for an answer with the same body."""

    def __init__(self, x: dict[str, Any]) -> None:
        acc = x["accounts"]["owner"]
        self.client = plain_tcp_client(acc["jid"], acc["password"])
        self.client.register_plugin("xep_0198")
        self.x = x
        self.waiting: dict[str, asyncio.Future] = {}
        self.client.add_event_handler("message", self._on)
        self.client.add_event_handler("groupchat_message", self._on)

    def _on(self, msg: Any) -> None:
        if msg["type"] == "groupchat" and msg["from"].resource != "bot":
            return
        fut = self.waiting.pop(msg["body"], None)
        if fut is not None and not fut.done():
            fut.set_result(None)

    async def start(self, rooms: list[str]) -> None:
        started = asyncio.get_running_loop().create_future()
        self.client.add_event_handler("session_start", lambda _: started.set_result(1))
        self.client.connect(self.x["host"], self.x["port"])
        await asyncio.wait_for(started, 10)
        self.client.send_presence()
        for room in rooms:
            await self.client.plugin["xep_0045"].join_muc_wait(
                JID(room), "owner", maxstanzas=0, timeout=10
            )

    def probe(self, to: str, mtype: str) -> Probe:
        async def run(text: str) -> None:
            fut = self.waiting[text] = asyncio.get_running_loop().create_future()
            self.client.send_message(mto=JID(to), mbody=text, mtype=mtype)
            await asyncio.wait_for(fut, 10)

        return run


async def bare_xmpp_bot(x: dict[str, Any], room: str) -> slixmpp.ClientXMPP:
    """The baseline: answer in the stanza callback, nothing else."""
    acc = x["accounts"]["bot"]
    bot = plain_tcp_client(f"{acc['jid']}/{BARE_RESOURCE}", acc["password"])
    bot.register_plugin("xep_0198")

    def echo(msg: Any) -> None:
        if msg["type"] == "chat":
            bot.send_message(mto=msg["from"].bare, mbody=msg["body"], mtype="chat")
        elif (
            msg["type"] == "groupchat"
            and msg["from"].bare == room
            and msg["from"].resource != "bot"
            and msg.get_plugin("delay", check=True) is None
        ):
            bot.send_message(mto=JID(room), mbody=msg["body"], mtype="groupchat")

    bot.add_event_handler("message", echo)
    bot.add_event_handler("groupchat_message", echo)
    started = asyncio.get_running_loop().create_future()
    bot.add_event_handler("session_start", lambda _: started.set_result(1))
    bot.connect(x["host"], x["port"])
    await asyncio.wait_for(started, 10)
    bot.send_presence()
    await bot.plugin["xep_0045"].join_muc_wait(JID(room), "bot", maxstanzas=0, timeout=10)
    return bot


async def bench_xmpp(x: dict[str, Any], count: int, store_factory: Callable) -> None:
    layer_room = x["rooms"]["public"]
    bare_room = f"latency-bare@{x['muc_domain']}"
    bare = await bare_xmpp_bot(x, bare_room)

    acc = x["accounts"]["bot"]
    settings = XmppSettings(
        jid=f"{acc['jid']}/{LAYER_RESOURCE}",
        password=acc["password"],
        host=x["host"],
        port=x["port"],
        tls="none",
        rooms=(layer_room,),
        nick="bot",
    )
    transport: XmppTransport

    async def echo(ev: IncomingEvent) -> None:
        if isinstance(ev, IncomingMessage):
            await transport.send(ev.chat, ev.text)

    transport = XmppTransport(settings, store_factory(), handler=echo)
    await transport.start()
    await asyncio.wait_for(transport.wait_online(), 10)

    owner = XmppOwner(x)
    await owner.start([bare_room, layer_room])
    direct = await measure(
        {
            "bare": owner.probe(f"{acc['jid']}/{BARE_RESOURCE}", "chat"),
            "layer": owner.probe(f"{acc['jid']}/{LAYER_RESOURCE}", "chat"),
        },
        count,
    )
    room = await measure(
        {
            "bare": owner.probe(bare_room, "groupchat"),
            "layer": owner.probe(layer_room, "groupchat"),
        },
        count,
    )
    await transport.stop()
    await shutdown(bare)
    await shutdown(owner.client)
    report("XMPP direct chat", count, direct["bare"], direct["layer"])
    report("XMPP MUC room", count, room["bare"], room["layer"])


# -- Matrix -------------------------------------------------------------------
#
# Two devices of the bot account: the bare echo answers in its own room, the
# transport in the configured room; each ignores the other's room.


async def bare_matrix_bot(m: dict[str, Any], room_id: str) -> tuple[AsyncClient, asyncio.Task]:
    acc = m["accounts"]["bot"]
    bot = AsyncClient(m["homeserver"], acc["user_id"])
    await bot.login(acc["password"], device_name="bench bare echo")
    await bot.join(room_id)
    first = await bot.sync(timeout=0, sync_filter={"room": {"timeline": {"limit": 0}}})
    assert isinstance(first, SyncResponse)

    async def echo(room: Any, event: RoomMessageText) -> None:
        if room.room_id == room_id and event.sender != bot.user_id:
            await bot.room_send(
                room.room_id, "m.room.message", {"msgtype": "m.notice", "body": event.body}
            )

    bot.add_event_callback(echo, RoomMessageText)
    return bot, asyncio.create_task(bot.sync_forever(timeout=30000))


def matrix_probe(owner: MatrixPeer, room_id: str) -> Probe:
    async def run(text: str) -> None:
        await owner.say(room_id, text)
        await owner.expect(
            lambda r, e: (
                r == room_id
                and e.get("sender") == "@bot:localhost"
                and (e.get("content") or {}).get("body") == text
            ),
            within=10,
        )

    return run


async def bench_matrix(m: dict[str, Any], count: int, store_factory: Callable) -> None:
    layer_room = m["rooms"]["public"]["room_id"]
    o = m["accounts"]["owner"]
    owner = await MatrixPeer(m["homeserver"], o["user_id"], o["password"]).start()
    await owner.join(layer_room)
    bare_room = await owner.create_room(invite=(m["accounts"]["bot"]["user_id"],))
    bare, task = await bare_matrix_bot(m, bare_room)

    acc = m["accounts"]["bot"]
    settings = MatrixSettings(
        homeserver=m["homeserver"],
        user_id=acc["user_id"],
        password=acc["password"],
        rooms=(layer_room,),
    )
    transport: MatrixTransport

    async def echo(ev: IncomingEvent) -> None:
        if isinstance(ev, IncomingMessage) and ev.chat.id == layer_room:
            await transport.send(ev.chat, ev.text)

    transport = MatrixTransport(settings, store_factory(), handler=echo)
    await transport.start()
    await asyncio.wait_for(transport.wait_online(), 10)
    results = await measure(
        {"bare": matrix_probe(owner, bare_room), "layer": matrix_probe(owner, layer_room)}, count
    )
    await transport.stop()
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    await bare.logout()
    await bare.close()
    await owner.stop()
    report("Matrix room", count, results["bare"], results["layer"])


async def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--count", type=int, default=500)
    parser.add_argument("--only", choices=("xmpp", "matrix"))
    parser.add_argument("--servers", type=Path, help="servers.json of running servers")
    parser.add_argument(
        "--store",
        choices=("memory", "sqlite"),
        default="sqlite",
        help="where the transport keeps processed ids (sqlite: a file)",
    )
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)

    tmp = tempfile.TemporaryDirectory(prefix="latency-")
    counter = iter(range(1000))

    def store_factory() -> Any:
        if args.store == "memory":
            return MemoryStateStore()
        return SqliteStateStore(Path(tmp.name) / f"state-{next(counter)}.sqlite3")

    servers = None
    if args.servers:
        info = load_info(args.servers)
    else:
        servers = Servers(Path(tmp.name) / "servers")
        t0 = time.monotonic()
        info = await asyncio.to_thread(servers.start)
        print(f"servers started in {time.monotonic() - t0:.2f}s")
    try:
        if args.only in (None, "xmpp"):
            await bench_xmpp(info["xmpp"], args.count, store_factory)
        if args.only in (None, "matrix"):
            await bench_matrix(info["matrix"], args.count, store_factory)
    finally:
        if servers is not None:
            await asyncio.to_thread(servers.stop)
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
