"""`/status` round trip in an encrypted Matrix room against the same in an unencrypted one.

The whole bot as `chatbot run` assembles it (in this process, crypto store on,
the owner's command bucket unthrottled as in bench/latency.py) on the real
Synapse (started here unless --servers names a running `scripts/servers`
description); the owner is an E2EE matrix-nio client. It sends `/status`
alternately in a room it created encrypted and in the configured unencrypted
room, one at a time, and waits for the bot's answer (a reply to that command).
Prints median and p99 per room and the ratio; asserts nothing.

    .venv/bin/python bench/e2ee_latency.py [--count 100]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import math
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

sys.path.insert(0, str(ROOT / "bench"))

from latency import stop_serving, unthrottled_chat  # noqa: E402

from chatbot.app import serve as service  # noqa: E402
from chatbot.app.startup import running_bot  # noqa: E402
from chatbot.app.wiring import build_transports  # noqa: E402
from chatbot.config import parse_config  # noqa: E402
from chatbot.store.kv import TransportState  # noqa: E402
from tests.integration.bot_process import bot_config, prepare  # noqa: E402
from tests.integration.matrix_e2ee_peer import E2eePeer  # noqa: E402
from tests.realservers import given_or_started  # noqa: E402


def p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(0.99 * len(ordered)) - 1)]


async def round_trip(owner: E2eePeer, room: str, bot: str) -> tuple[float, bool]:
    t0 = time.perf_counter()
    command = await owner.say(room, "/status")
    _, answer = await owner.expect(
        lambda r, ev: (
            r == room
            and ev.get("sender") == bot
            and ((ev.get("content") or {}).get("m.relates_to") or {})
            .get("m.in_reply_to", {})
            .get("event_id")
            == command
        ),
        within=30,
    )
    return time.perf_counter() - t0, answer["_decrypted"]


async def run(info: dict, count: int, work: Path) -> None:
    m = info["matrix"]
    acc = m["accounts"]["owner"]
    bot = m["accounts"]["bot"]["user_id"]
    work.mkdir(parents=True, exist_ok=True)
    owner = await E2eePeer(m["homeserver"], acc["user_id"], acc["password"], work / "peer").start()
    stack = contextlib.AsyncExitStack()
    try:
        encrypted = await owner.create_encrypted_room(invite=(bot,))
        plain = m["rooms"]["public"]["room_id"]
        await owner.join(plain)
        prepare(work, {"report": "# Report\n\nBuild it.\n"})
        path = bot_config(work, info, xmpp=False, matrix=True, matrix_rooms=(encrypted, plain))
        config = parse_config(path.read_text(), path)
        stack.enter_context(unthrottled_chat())
        running = await stack.enter_async_context(running_bot(config))
        transports = build_transports(config, TransportState(running.store))
        stop = asyncio.Event()
        serving = asyncio.create_task(service.serve(running, stop, transports=transports))
        stack.push_async_callback(stop_serving, stop, serving)
        await asyncio.wait_for(transports["matrix"].wait_online(), 60)
        await owner.until(lambda: bot in owner.client.rooms[encrypted].users, within=30)
        await owner.devices_of(bot, transports["matrix"].client.device_id, within=30)
        for room in (encrypted, plain):  # warm-up: Olm/Megolm sessions, caches
            await round_trip(owner, room, bot)
        times: dict[str, list[float]] = {"encrypted": [], "unencrypted": []}
        for _ in range(count):
            for name, room in (("encrypted", encrypted), ("unencrypted", plain)):
                elapsed, was_encrypted = await round_trip(owner, room, bot)
                assert was_encrypted == (name == "encrypted"), (name, was_encrypted)
                times[name].append(elapsed)
        for name, values in times.items():
            print(
                f"{name:12s} /status round trip over {len(values)}: "
                f"median {statistics.median(values) * 1000:.1f} ms, "
                f"p99 {p99(values) * 1000:.1f} ms"
            )
        ratio = statistics.median(times["encrypted"]) / statistics.median(times["unencrypted"])
        print(f"encrypted / unencrypted median: {ratio:.2f}x")
    finally:
        await stack.aclose()
        await owner.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--servers", help="servers.json of a running `scripts/servers start`")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        with given_or_started(args.servers, work / "servers") as info:
            asyncio.run(run(info, args.count, work / "bot"))


if __name__ == "__main__":
    main()
