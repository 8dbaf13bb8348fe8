"""Owner -> bot -> owner latency: transport layer and full bot vs a bare echo client.

Over the real Prosody and Synapse (started here unless --servers names a
running `scripts/servers` description), an owner client sends N messages one
at a time and waits for each answer. The bot is first a bare slixmpp / nio
echo client, then the transport layer (XmppTransport / MatrixTransport with
an echoing handler, processed-id bookkeeping included), in the same run.
Prints median and p99 and the ratio; asserts nothing (target: the transport
adds less than 25% at p99).

The full path (issue 6): the whole bot as `chatbot run` assembles it (store,
board, worker, notifier, outbox sender, chat service; in this process) on a
board of --cards cards, and the owner sends `/status <slug>` in the bot's
XMPP room, a different card each time, until the bot's answer arrives: a
room message from the bot whose XEP-0461 reply id is the room's stanza-id of
the command. Next to it, interleaved, a bare echo in another room of the same
Prosody (room against room, so both pay the MUC fan-out). The owner and the
bare echo run in processes of their own, as a phone and another client would
(--one-process puts them in the bot's process, the method before issue 18; the
owner's client then works on its loop while the bot does). Target (issue 18):
p99 within 1.5x the bare echo, and at --cards 100000 within 1.2x of the same run
at 10,000 cards (run it twice; the board's size must not be felt). The board is
filled by bulk INSERT into `cards`, `events` and `telemetry` (10,000 cards in
well under a second; writing 10,000 intent files and importing them took about
6.6 s on the 2-core dev box).

    .venv/bin/python bench/latency.py [--count 500] [--only xmpp|matrix|full]
        [--cards 10000] [--one-process]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import math
import random
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import slixmpp  # noqa: E402
from nio import AsyncClient, RoomMessageText, SyncResponse  # noqa: E402
from slixmpp import JID  # noqa: E402

from chatbot.app import serve as service  # noqa: E402
from chatbot.app.startup import running_bot  # noqa: E402
from chatbot.app.wiring import build_transports  # noqa: E402
from chatbot.chat.intake import ChatIntake  # noqa: E402
from chatbot.config import parse_config  # noqa: E402
from chatbot.store import Store  # noqa: E402
from chatbot.store.kv import TransportState  # noqa: E402
from chatbot.transports.base import (  # noqa: E402
    IncomingEvent,
    IncomingMessage,
    MemoryStateStore,
    Outgoing,
)
from chatbot.transports.matrix.transport import MatrixSettings, MatrixTransport  # noqa: E402
from chatbot.transports.xmpp import stanzas as wire  # noqa: E402
from chatbot.transports.xmpp.connection import shutdown  # noqa: E402
from chatbot.transports.xmpp.transport import XmppSettings, XmppTransport  # noqa: E402
from tests.integration.bot_process import bot_config, wait_for_occupant  # noqa: E402
from tests.integration.e2e import BOT_NICK, reply_target  # noqa: E402
from tests.integration.matrix_peer import MatrixPeer  # noqa: E402
from tests.pipeline.harness import make_repo  # noqa: E402
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


def report(
    title: str,
    count: int,
    bare: list[float],
    layer: list[float],
    *,
    label: str = "transport layer",
    ratio_label: str = "ratio transport/bare",
    target: float = 1.25,
) -> None:
    bm, bp = statistics.median(bare), pct(bare, 0.99)
    lm, lp = statistics.median(layer), pct(layer, 0.99)
    print(f"\n{title}, {count} messages (owner -> bot -> owner)")
    print(f"  {'':26}{'median ms':>10}{'p99 ms':>10}")
    print(f"  {'bare echo client':26}{bm:10.2f}{bp:10.2f}")
    print(f"  {label:26}{lm:10.2f}{lp:10.2f}")
    verdict = "ok" if lp / bp < target else "ABOVE TARGET"
    print(
        f"  {ratio_label:26}{lm / bm:9.2f}x{lp / bp:9.2f}x   (target p99 < {target:g}x: {verdict})"
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
            await transport.send(Outgoing(ev.envelope.chat, ev.text))

    transport = XmppTransport(settings, await store_factory(), handler=echo)
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
        if isinstance(ev, IncomingMessage) and ev.envelope.chat.id == layer_room:
            await transport.send(Outgoing(ev.envelope.chat, ev.text))

    transport = MatrixTransport(settings, await store_factory(), handler=echo)
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


# -- Full path (issue 6) --------------------------------------------------------
#
# The whole bot, in this process, answers `/status <slug>` in its XMPP room on a
# board of 10,000 cards; a bare echo answers in a second room of the same
# Prosody. In-process, so the bot shares this event loop with the owner and the
# bare echo, just as the transport layer above does: whatever the bot costs
# delays the next echo too, which the interleaving spreads over both sides.

FULL_TARGET = 1.5
STATUS_SEED = 6  # the same cards are asked for in every run

# What a card has been through, by phase: the events that led there and the
# runs that were recorded on the way. Most cards wait as planned, the rest are
# spread over phases that need no live job (the worker must stay idle).
HISTORIES: tuple[tuple[tuple[str, ...], tuple[tuple[str, str], ...]], ...] = (
    (("planned",), ()),
    (("planned",), ()),
    (("planned",), ()),
    (("planned",), ()),
    (("planned", "operator_running", "needs_human"), (("operator", "ok"),)),
    (
        ("planned", "operator_running", "building", "reviewing", "done"),
        (("operator", "ok"), ("builder", "ok"), ("reviewer", "ok")),
    ),
    (
        ("planned", "operator_running", "building", "reviewing", "done"),
        (("operator", "ok"), ("builder", "ok"), ("reviewer", "ok")),
    ),
    (
        ("planned", "operator_running", "building", "reviewing", "done", "deployed"),
        (("operator", "ok"), ("builder", "ok"), ("reviewer", "ok")),
    ),
    (
        ("planned", "operator_running", "building", "failed"),
        (("operator", "ok"), ("builder", "error")),
    ),
    (("planned", "archived"), ()),
)
# Runs keep their prompt and answer; a few KB each is what the agents' real
# prompts weigh, so the rows are not unrealistically small.
PROMPT = "Implement the intent described below. " * 60
RESPONSE = "===BUILDER-REPORT===\nDone; tests pass.\n===END-BUILDER-REPORT===\n" * 12


async def fill_board(store: Store, cards: int) -> tuple[int, int]:
    """Real rows in one transaction: cards, their events, their runs.

    Ids are given explicitly so the events and runs need no lookups.
    """
    now = time.time()
    card_rows, event_rows, run_rows = [], [], []
    for i in range(cards):
        card_id = i + 1
        phases, runs = HISTORIES[i % len(HISTORIES)]
        phase = phases[-1]
        worked = len(phases) > 1
        card_rows.append(
            (
                card_id,
                f"card-{i}",
                f"Card {i}: make the widget {i} configurable",
                phase,
                len(phases),
                "light",
                "codex" if worked else None,
                "gpt-5-codex-mini" if worked else None,
                "medium" if worked else None,
                f"{i:040x}" if phase in ("done", "deployed") else None,
                "approve" if phase in ("done", "deployed") else None,
                "build" if phase == "failed" else None,
                "the build run exited with status 1" if phase == "failed" else None,
                f"docs/intent/card-{i}.md",
                now - 86400 + i,
                now - 86400 + i + len(phases),
            )
        )
        for seq, to_phase in enumerate(phases, 1):
            before = phases[seq - 2] if seq > 1 else None
            action = "import" if seq == 1 else "bench"
            event_rows.append((card_id, seq, before, to_phase, action, "system", now + seq))
        for role, outcome in runs:
            run_rows.append(
                (
                    card_id,
                    role,
                    "codex",
                    "gpt-5-codex-mini",
                    "gpt-5-codex-mini",
                    "medium",
                    12000,
                    8000,
                    900,
                    0.02,
                    42.0,
                    7,
                    outcome,
                    PROMPT,
                    RESPONSE,
                    now,
                )
            )
    async with store.transaction() as db:
        await db.executemany(
            "INSERT INTO cards (id, slug, title, kind, phase, version, lane, runtime, model, "
            "reasoning_effort, commit_hash, review_decision, failure_stage, failure_detail, "
            "source_path, created_at, updated_at) "
            "VALUES (?, ?, ?, 'intent', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            card_rows,
        )
        await db.executemany(
            "INSERT INTO events (card_id, seq, from_phase, to_phase, action, actor, at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            event_rows,
        )
        await db.executemany(
            "INSERT INTO telemetry (card_id, role, runtime, configured_model, actual_model, "
            "reasoning_effort, input_tokens, cached_tokens, output_tokens, cost_usd, "
            "duration_s, turns, outcome, prompt, response, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            run_rows,
        )
    return len(event_rows), len(run_rows)


def unthrottled_chat() -> Any:
    """Room for 500 commands in a row in the chat service that serve() builds.

    The owner's token bucket (10 commands, one more every 3 s) would refuse
    almost all of them. A huge bucket still runs the same bookkeeping per
    command; it just never runs dry. Wrapping from_config, not attach_chat,
    leaves serve()'s own wiring of the chat service untouched.
    """
    original = ChatIntake.from_config.__func__  # type: ignore[attr-defined]

    def from_config(cls: type, board: Any, config: Any, **options: Any) -> ChatIntake:
        return original(cls, board, config, **{"rate_capacity": 1_000_000, **options})

    return mock.patch.object(ChatIntake, "from_config", classmethod(from_config))


@dataclass
class Pending:
    room: str
    text: str
    slug: str
    answered: asyncio.Future
    stanza_id: str | None = None


class CommandOwner(XmppOwner):
    """The owner, also sending commands to the full bot and awaiting its replies."""

    def __init__(self, x: dict[str, Any]) -> None:
        super().__init__(x)
        self.nick = "owner"
        self.pending: Pending | None = None
        self.not_status = 0  # answers that were not the card's status (should stay 0)
        self.client.add_event_handler("groupchat_message", self._on_room)

    def _on_room(self, msg: Any) -> None:
        pending = self.pending
        if (
            pending is None
            or msg["from"].bare != pending.room
            or msg.xml.find("{urn:xmpp:delay}delay") is not None
        ):
            return
        nick = msg["from"].resource
        if nick == self.nick and msg["body"] == pending.text:
            # Our own command as the room reflects it: its stanza-id is what the
            # bot's reply will point at. It always comes before the bot's reply,
            # which the room sends only after the bot has received the command.
            pending.stanza_id = wire.trusted_stanza_id(msg, pending.room)
        elif (
            nick == BOT_NICK
            and pending.stanza_id is not None
            and reply_target(msg) == pending.stanza_id
            and not pending.answered.done()
        ):
            if f"{pending.slug} — " not in msg["body"]:
                self.not_status += 1
            pending.answered.set_result(None)

    def command_probe(self, room: str, cards: int) -> Probe:
        slugs = random.Random(STATUS_SEED)

        async def run(_text: str) -> None:
            # measure() hands every probe a fresh text; the command needs a
            # slug instead, a different card each time.
            slug = f"card-{slugs.randrange(cards)}"
            text = f"/status {slug}"
            fut = asyncio.get_running_loop().create_future()
            self.pending = Pending(room, text, slug, fut)
            self.client.send_message(mto=JID(room), mbody=text, mtype="groupchat")
            try:
                await asyncio.wait_for(fut, 10)
            except TimeoutError:
                seen = (
                    "the room's echo of it carried no stanza-id"
                    if self.pending.stanza_id is None
                    else f"nothing pointed at stanza-id {self.pending.stanza_id}"
                )
                raise RuntimeError(f"no reply of the bot to {text!r} in 10 s: {seen}") from None
            finally:
                self.pending = None

        return run


async def stop_serving(stop: asyncio.Event, serving: asyncio.Task) -> None:
    stop.set()
    try:
        await asyncio.wait_for(serving, 15)
    except TimeoutError:
        serving.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await serving


async def bench_full(
    info: dict[str, Any],
    servers_json: Path,
    count: int,
    cards: int,
    root: Path,
    *,
    one_process: bool = False,
) -> None:
    x = info["xmpp"]
    echo_room = f"latency-echo@{x['muc_domain']}"
    root.mkdir(parents=True)
    make_repo(root, {})  # the worker wants a git repository; the cards come from SQL
    path = bot_config(root, info)
    config = parse_config(path.read_text(), path)

    async with contextlib.AsyncExitStack() as stack:
        stack.enter_context(unthrottled_chat())
        bot = await stack.enter_async_context(running_bot(config))
        t0 = time.perf_counter()
        events, runs = await fill_board(bot.store, cards)
        print(
            f"\nboard: {cards} cards, {events} events, {runs} runs, "
            f"filled in {time.perf_counter() - t0:.2f}s (bulk INSERT)"
        )
        transports = build_transports(config, TransportState(bot.store))
        stop = asyncio.Event()
        serving = asyncio.create_task(service.serve(bot, stop, transports=transports))
        stack.push_async_callback(stop_serving, stop, serving)
        online = asyncio.ensure_future(transports["xmpp"].wait_online())
        await asyncio.wait({online, serving}, timeout=20, return_when="FIRST_COMPLETED")
        if not online.done():
            online.cancel()
            if serving.done():
                serving.result()  # serve() died: its error says why
            raise RuntimeError("the bot did not come online in 20 s")

        if one_process:
            bare = await bare_xmpp_bot(x, echo_room)
            stack.push_async_callback(shutdown, bare)
            results = await owner_measures(info, count, cards)
            where = "owner, bare echo and bot in one process"
        else:
            echo = await start_role(stack, servers_json, "echo")
            owner = await start_role(stack, servers_json, "owner", count, cards)
            results = json.loads(await read_line(owner, 3600))
            echo.stdin.close()
            where = "owner, bare echo and bot in three processes"
    report(
        f"Full path, XMPP MUC rooms: /status <slug> on {cards} cards ({where})",
        count,
        results["bare"],
        results["full"],
        label="full bot /status",
        ratio_label="ratio full/bare",
        target=FULL_TARGET,
    )
    # Every answer counted was a reply to its command's stanza-id; this says
    # whether it was also the status asked for (a refusal would be fast too).
    print(f"  answers that were not the card's status: {results['not_status']} (should be 0)")


async def owner_measures(info: dict[str, Any], count: int, cards: int) -> dict[str, Any]:
    """The owner's side of the full path: join both rooms, wait for the bot, measure."""
    x = info["xmpp"]
    room = x["rooms"]["public"]
    owner = CommandOwner(x)
    try:
        await owner.start([f"latency-echo@{x['muc_domain']}", room])
        await wait_for_occupant(owner, room, BOT_NICK)
        results: dict[str, Any] = await measure(
            {
                "bare": owner.probe(f"latency-echo@{x['muc_domain']}", "groupchat"),
                "full": owner.command_probe(room, cards),
            },
            count,
        )
    finally:
        await shutdown(owner.client)
    results["not_status"] = owner.not_status
    return results


# -- the full path's other processes -------------------------------------------
#
# A person's phone does not share the bot's event loop. In one process, the owner's
# client parsing the room's copy of its own command ran on the bot's loop while the
# bot worked on that command, and was counted as the bot's time (the bare echo had
# answered inside its stanza callback before that copy was read). So by default the
# owner and the bare echo each run in a process of their own, and the bot in this one.


async def start_role(
    stack: contextlib.AsyncExitStack, servers_json: Path, role: str, *args: int
) -> asyncio.subprocess.Process:
    command = [sys.executable, __file__, "--role", role, "--servers", str(servers_json)]
    if role == "owner":
        command += ["--count", str(args[0]), "--cards", str(args[1])]
    proc = await asyncio.create_subprocess_exec(
        *command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
    )
    stack.push_async_callback(end_role, proc)
    if role == "echo":
        line = await read_line(proc, 30)
        if line != "ready":
            raise RuntimeError(f"the bare echo process said {line!r}, not 'ready'")
    return proc


async def read_line(proc: asyncio.subprocess.Process, within: float) -> str:
    assert proc.stdout is not None
    line = await asyncio.wait_for(proc.stdout.readline(), within)
    if not line:
        await proc.wait()
        raise RuntimeError(f"a bench process ended with exit code {proc.returncode}")
    return line.decode().strip()


async def end_role(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is None:
        proc.terminate()
    await proc.wait()


async def run_role(role: str, info: dict[str, Any], count: int, cards: int) -> None:
    if role == "owner":
        results = await owner_measures(info, count, cards)
        print(json.dumps(results), flush=True)
        return
    x = info["xmpp"]
    bare = await bare_xmpp_bot(x, f"latency-echo@{x['muc_domain']}")
    print("ready", flush=True)
    try:
        await asyncio.to_thread(sys.stdin.read)  # until the bench closes our stdin
    finally:
        await shutdown(bare)


async def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--count", type=int, default=500)
    parser.add_argument("--only", choices=("xmpp", "matrix", "full"))
    parser.add_argument(
        "--cards", type=int, default=10_000, help="cards on the board for the full path"
    )
    parser.add_argument("--servers", type=Path, help="servers.json of running servers")
    parser.add_argument(
        "--one-process",
        action="store_true",
        help="full path: owner and bare echo in the bot's process (the method before issue 18)",
    )
    parser.add_argument("--role", choices=("owner", "echo"), help=argparse.SUPPRESS)
    parser.add_argument(
        "--store",
        choices=("memory", "sqlite"),
        default="sqlite",
        help="where the transport keeps processed ids (sqlite: the bot's store in a file)",
    )
    args = parser.parse_args()
    if args.count < 1 or args.cards < 1:
        parser.error("--count and --cards must be at least 1")
    logging.basicConfig(level=logging.WARNING)
    if args.role:  # one of the full path's other processes (see start_role)
        if args.servers is None:
            parser.error("--role needs --servers (the full path starts these processes itself)")
        await run_role(args.role, load_info(args.servers), args.count, args.cards)
        return 0

    tmp = tempfile.TemporaryDirectory(prefix="latency-")
    counter = iter(range(1000))

    stores: list[Store] = []

    async def store_factory() -> Any:
        if args.store == "memory":
            return MemoryStateStore()
        stores.append(await Store.open(Path(tmp.name) / f"state-{next(counter)}.sqlite3"))
        return TransportState(stores[-1])

    servers = None
    servers_json = args.servers
    if args.servers:
        info = load_info(args.servers)
    else:
        servers_json = Path(tmp.name) / "servers"
        servers = Servers(servers_json)
        t0 = time.monotonic()
        info = await asyncio.to_thread(servers.start)
        print(f"servers started in {time.monotonic() - t0:.2f}s")
    try:
        if args.only in (None, "xmpp"):
            await bench_xmpp(info["xmpp"], args.count, store_factory)
        if args.only in (None, "matrix"):
            await bench_matrix(info["matrix"], args.count, store_factory)
        if args.only in (None, "full"):
            await bench_full(
                info,
                servers_json,
                args.count,
                args.cards,
                Path(tmp.name) / "bot",
                one_process=args.one_process,
            )
    finally:
        for store in stores:
            await store.close()
        if servers is not None:
            await asyncio.to_thread(servers.stop)
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
