"""The people who run the bot are always answered (issue 34), over the real Prosody and
the real bot process: an owner's 60 commands in a few seconds get 60 answers in order, a
requester who floods the room is limited and told once, and an owner's /deploy right
after a flood still deploys."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from tests.pipeline.harness import builder_answer, direct, review_answer

from .e2e import BOT_NICK, reply_target, start_bot

INTENT = "# Reporting\n\nBuild the monthly report.\n"
TURNS = [
    {"match": "OPERATOR-DECISION", "answer": direct("light")},
    {
        "match": "COMMIT-MESSAGE",
        "cli": "codex",
        "answer": builder_answer("Add report"),
        "files": {"report.py": "x = 1\n"},
    },
    {"match": "REVIEW-RESULT", "answer": review_answer("approve", "Fine work.")},
]
OWNER_COMMANDS = 60
REQUESTER_FLOOD = 30


def from_bot(message) -> bool:
    return message["type"] == "groupchat" and message["from"].resource == BOT_NICK


async def test_owners_are_always_answered_and_a_flooding_requester_is_told_once(
    tmp_path: Path, servers, xmpp_peer
) -> None:
    requester_jid = servers.info["xmpp"]["accounts"]["requester"]["jid"]
    bot, room = await start_bot(
        tmp_path,
        servers.info,
        TURNS,
        {"report": INTENT},
        xmpp_peer,
        requesters=(requester_jid,),
        # A refill slower than the whole test: the requester's count cannot depend on
        # how fast this machine is.
        bot_lines=("rate_limit_refill_s = 600",),
    )
    try:
        await room.say("/start report")
        await room.bot_says(r"review approve", within=60)
        assert bot.phase("report") == "ready_for_deployment"

        # The owner: 60 commands as fast as the room takes them, every one answered.
        # The answers in the order they arrive (the peer's inbox is reordered by waits).
        sent: list[str] = []
        answered: list[str] = []
        all_in = asyncio.Event()

        def arrived(message) -> None:
            if from_bot(message) and reply_target(message) in sent:
                answered.append(reply_target(message))
                if len(answered) == OWNER_COMMANDS:
                    all_in.set()

        room.peer.client.add_event_handler("groupchat_message", arrived)
        t0 = time.monotonic()
        for n in range(OWNER_COMMANDS):
            sent.append(await room.say(("/status", "/why report", "/runs")[n % 3]))
        typed = time.monotonic() - t0
        await asyncio.wait_for(all_in.wait(), 60)
        took = time.monotonic() - t0
        print(f"\n{OWNER_COMMANDS} owner commands typed in {typed:.1f}s, answered in {took:.1f}s")
        assert typed < 10
        assert answered == sent  # each once, in the order sent

        # A requester floods the room: ten answered, told once, the rest ignored.
        requester = await xmpp_peer("requester")
        await requester.join(room.room, "req")
        flood = [await requester.say(room.room, "/status", room=True) for _ in range(30)]
        # Handled in order: once the owner's next command is answered, the flood was read.
        after = await room.say("/deploy report")
        deployed_reply = await room.bot_replies_to(after, within=60)
        # The room sends each occupant its messages in order: once the requester has
        # the answer to /deploy too, it has every answer to its flood.
        await requester.expect(lambda m: from_bot(m) and reply_target(m) == after, within=60)
        to_requester = []
        while not requester.inbox.empty():
            message = requester.inbox.get_nowait()
            if from_bot(message) and reply_target(message) in flood:
                to_requester.append(message["body"])
        notices = [body for body in to_requester if "Too many commands" in body]
        assert len(notices) == 1, to_requester
        assert "the next one is taken in" in notices[0]
        assert len(to_requester) == 10 + 1, to_requester

        # The owner's /deploy right after the flood went through and deploys.
        assert "report" in deployed_reply["body"]
        await room.bot_says(r"🚀 report", within=60)
        assert bot.phase("report") == "deployed"
    finally:
        await bot.stop()
