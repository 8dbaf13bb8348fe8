"""How often a long run's status message is edited, as the owner's client sees it.

Over the real Prosody (started here unless --servers names a running
`scripts/servers start`), the whole bot runs as `chatbot run` with
`progress_interval_s` (default 30) and a scripted codex builder that works for
--seconds (default 120), reporting a step every --step-every seconds. An owner
client in the room sends `/start`, then records every XEP-0308 correction of the
run's status message until the one that states the outcome.

Prints the number of edits, their spacing (min / median / max) and the lag of
the final edit after the run ended; asserts nothing. Goal (issue 14): one edit
per interval at most, the outcome promptly.

    .venv/bin/python bench/progress.py [--seconds 120] [--interval 30] [--step-every 5]
"""

from __future__ import annotations

import argparse
import asyncio
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from chatbot.transports.xmpp import stanzas as wire  # noqa: E402
from tests.integration.bot_process import BotProcess, bot_config, prepare, write_scenario  # noqa: E402
from tests.integration.xmpp_peer import XmppPeer  # noqa: E402
from tests.pipeline.harness import builder_answer, direct, review_answer  # noqa: E402
from tests.realservers import given_or_started  # noqa: E402

INTENT = "# Reporting\n\nBuild the monthly report.\n"


def correction_of(message) -> str | None:
    element = message.xml.find(f"{{{wire.NS_CORRECT}}}replace")
    return element.get("id") if element is not None else None


async def run(info: dict, root: Path, seconds: float, interval: float, step_every: float) -> None:
    steps = max(1, int(seconds / step_every))
    turns = [
        {"match": "OPERATOR-DECISION", "answer": direct("light")},
        {
            "match": "COMMIT-MESSAGE",
            "cli": "codex",
            "answer": builder_answer("Add report"),
            "files": {"report.py": "x = 1\n"},
            "steps": [{"command": f"step {n + 1} of {steps}"} for n in range(steps)],
            "step_delay": seconds / steps,
        },
        {"match": "REVIEW-RESULT", "answer": review_answer("approve")},
    ]
    prepare(root, {"report": INTENT})
    write_scenario(root, turns)
    config = bot_config(root, info, bot_lines=(f"progress_interval_s = {interval}",))
    x = info["xmpp"]
    owner_account = x["accounts"]["owner"]
    room = x["rooms"]["public"]
    owner = await XmppPeer(
        owner_account["jid"], owner_account["password"], x["host"], x["port"]
    ).start()
    bot = await BotProcess(root, config).start()
    try:
        await owner.join(room, "owner")
        await bot.logged(r"xmpp transport online", within=60)
        await owner.say(room, "/start report", room=True)
        status = await owner.expect(
            lambda m: m["type"] == "groupchat" and "builder run started" in m["body"],
            within=60,
        )
        started = time.monotonic()
        arrivals: list[float] = []
        bodies: list[str] = []
        while True:
            message = await owner.expect(
                lambda m: m["type"] == "groupchat" and correction_of(m) == status["id"],
                within=seconds + 4 * interval + 60,
            )
            arrivals.append(time.monotonic() - started)
            bodies.append(message["body"])
            if re.search(r"builder run \w+ after", message["body"]):
                break  # the outcome
    finally:
        await bot.stop()
        await owner.stop()
    gaps = [b - a for a, b in zip([0.0, *arrivals], arrivals, strict=False)]
    running = gaps[:-1]
    print(
        f"run of {seconds:.0f} s, progress_interval_s = {interval:g}, a step every {step_every:g} s"
    )
    print(f"edits of the status message: {len(arrivals)} ({len(running)} while running, 1 final)")
    if running:
        print(
            "spacing while running: "
            f"min {min(running):.1f} s, median {statistics.median(running):.1f} s, "
            f"max {max(running):.1f} s"
        )
    print(f"final edit at {arrivals[-1]:.1f} s after the start message: {bodies[-1]!r}")
    print(f"edit times (s after start): {', '.join(f'{t:.1f}' for t in arrivals)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=120.0)
    parser.add_argument("--interval", type=float, default=30.0)
    parser.add_argument("--step-every", type=float, default=5.0)
    parser.add_argument("--servers", help="servers.json of a running `scripts/servers start`")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        with given_or_started(args.servers, work / "servers") as info:
            (work / "bot").mkdir()
            asyncio.run(run(info, work / "bot", args.seconds, args.interval, args.step_every))


if __name__ == "__main__":
    main()
