"""End to end over the real Prosody: an owner client drives the real bot process.

Each test sends only what an owner (or stranger) client would send and asserts
on what the clients receive and on the card's final state.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import psutil

from tests.pipeline.harness import (
    builder_answer,
    child,
    direct,
    operator_answer,
    review_answer,
    synthesis_answer,
)
from tests.pipeline.support import Fifo

from .e2e import WITHIN, bot_says_directly, stanza_id, start_bot

INTENT = "# Reporting\n\nBuild the monthly report.\n"


BUILD = {
    "match": "COMMIT-MESSAGE",
    "cli": "codex",
    "answer": builder_answer("Add part"),
    "files": {"part.txt": "part\n"},
    "repeat": True,
}
APPROVE = {
    "match": "REVIEW-RESULT",
    "answer": review_answer("approve", "Fine work."),
    "repeat": True,
}


async def test_start_split_into_two_children_built_reviewed_and_parent_done(
    tmp_path: Path, servers, xmpp_peer
) -> None:
    decision = operator_answer(
        {
            "decision": "split",
            "children": [child("part-a", 1, []), child("part-b", 2, ["part-a"])],
        }
    )
    synthesis = {"match": "SYNTHESIS-RESULT", "answer": synthesis_answer(["part-a", "part-b"])}
    turns = [{"match": "OPERATOR-DECISION", "answer": decision}, BUILD, APPROVE, synthesis]
    bot, room = await start_bot(tmp_path, servers.info, turns, {"report": INTENT}, xmpp_peer)
    try:
        command = await room.say("/start report")
        ack = await room.bot_replies_to(command)
        assert "report" in ack["body"]
        await room.bot_says(r"operator split the card into 2 children")
        first = await room.bot_says(r"review approve")
        second = await room.bot_says(r"review approve")
        reviewed = {m["body"].split(":")[0].split()[-1] for m in (first, second)}
        assert reviewed == {"part-a", "part-b"}
        assert "Fine work." in first["body"]
        await room.bot_says(r"report: all children succeeded")
        summed = await room.bot_says(r"report: the synthesis of its children is in")
        assert "docs/review/report.md" in summed["body"] and "Both parts are in." in summed["body"]
        assert bot.phase("report") == "done"
        assert bot.phase("part-a") == bot.phase("part-b") == "ready_for_deployment"
    finally:
        await bot.stop()


async def test_needs_human_answered_by_reply_then_by_reaction_and_late_answer(
    tmp_path: Path, servers, xmpp_peer
) -> None:
    def ask(question: str) -> str:
        return operator_answer(
            {"decision": "needs_human", "reason": "unclear", "human_action": question}
        )

    turns = [
        {"match": "Which region?", "answer": direct("light")},
        {"match": "S3 please", "answer": ask("Which region?\noptions: eu-central | us-east")},
        {"match": "OPERATOR-DECISION", "answer": ask("Which storage?\noptions: S3 | local disk")},
        BUILD,
        APPROVE,
    ]
    bot, room = await start_bot(tmp_path, servers.info, turns, {"report": INTENT}, xmpp_peer)
    try:
        await room.say("/start report")
        first = await room.bot_says(r"Which storage\?")
        assert "1️⃣ S3" in first["body"] and "2️⃣ local disk" in first["body"]
        await room.reply("S3 please", stanza_id(first, room.room))
        second = await room.bot_says(r"Which region\?")
        await room.react(stanza_id(second, room.room), "2️⃣")
        await room.bot_says(r"review approve")
        # A second answer to the first question comes too late and changes nothing.
        late = await room.reply("local disk after all", stanza_id(first, room.room))
        told = await room.bot_replies_to(late)
        assert "already answered" in told["body"]
        card = bot.card("report")
        answers = [a["answer"] for a in json.loads(card["data"])["answers"]]
        assert answers == ["S3 please", "us-east"]
        assert card["phase"] == "ready_for_deployment"
    finally:
        await bot.stop()


async def test_draft_dialogue_in_a_direct_chat_by_plain_messages(
    tmp_path: Path, servers, xmpp_peer
) -> None:
    turns = [
        {
            "match": "monthly, on the first",
            "answer": "===DRAFT-INTENT===\nslug: csv-export\n---\n# CSV export\n\nExport monthly.\n===END-DRAFT-INTENT===",
        },
        {
            "match": "Planner: Which format?",
            "answer": "===DRAFT-QUESTION===\nHow often?\noptions: none\n===END-DRAFT-QUESTION===",
        },
        {
            "match": "DRAFT-QUESTION",
            "answer": "===DRAFT-QUESTION===\nWhich format?\noptions: CSV | PDF\n===END-DRAFT-QUESTION===",
        },
    ]
    bot, room = await start_bot(tmp_path, servers.info, turns, {}, xmpp_peer)
    bot_jid = servers.info["xmpp"]["accounts"]["bot"]["jid"]
    owner = room.peer
    try:
        await owner.say(bot_jid, "/draft I need an export of the monthly numbers")
        await bot_says_directly(owner, bot_jid, r"Which format\?")
        await owner.say(bot_jid, "CSV")
        await bot_says_directly(owner, bot_jid, r"How often\?")
        await owner.say(bot_jid, "monthly, on the first")
        await bot_says_directly(owner, bot_jid, r"csv-export")
        card = bot.card("csv-export")
        assert (card["kind"], card["phase"]) == ("intent", "planned")
        assert (
            (tmp_path / "repo" / "docs" / "intent" / "csv-export.md")
            .read_text()
            .startswith("# CSV export")
        )
        said = [turn[1] for turn in json.loads(card["data"])["conversation"]]
        assert "CSV" in said and "monthly, on the first" in said
    finally:
        await bot.stop()


async def test_review_reject_then_fix_then_approve_and_deploy(
    tmp_path: Path, servers, xmpp_peer
) -> None:
    deploys = tmp_path / "deploys.log"
    script = tmp_path / "deploy.sh"
    script.write_text(f'#!/bin/sh\necho "$1" >> {deploys}\n')
    script.chmod(0o755)
    turns = [
        {"match": "OPERATOR-DECISION", "answer": direct("light")},
        {
            "match": "FIXER-QUESTION",
            "answer": builder_answer("Add the missing tests"),
            "files": {"test_report.py": "def test_it():\n    assert True\n"},
        },
        {
            "match": "COMMIT-MESSAGE",
            "cli": "codex",
            "answer": builder_answer("Add report"),
            "files": {"report.py": "x = 1\n"},
        },
        {"match": "REVIEW-RESULT", "answer": review_answer("reject", "Tests are missing.")},
        {"match": "REVIEW-RESULT", "answer": review_answer("approve", "Now with tests.")},
    ]
    extra = f'[deploy]\ncommand = ["{script}", "{{commit}}"]\n'
    bot, room = await start_bot(
        tmp_path, servers.info, turns, {"report": INTENT}, xmpp_peer, extra=extra
    )
    try:
        await room.say("/start report")
        rejected = await room.bot_says(r"review reject")
        assert "Tests are missing." in rejected["body"] and "/fix report" in rejected["body"]
        await room.say("/fix report")
        await room.bot_says(r"review approve")
        await room.bot_says(r"🚀 report")
        card = bot.card("report")
        assert card["phase"] == "deployed" and card["deployment_status"] == "deployed"
        assert deploys.read_text().split() == [card["commit_hash"]]
    finally:
        await bot.stop()


async def test_limit_reached_with_ladder_spent_then_scissors_split(
    tmp_path: Path, servers, xmpp_peer
) -> None:
    split = (
        "===SPLIT-REPORT===\n===CHILD===\nslug: report-data\n---\n# Data\n\nNumbers.\n===END-CHILD===\n"
        "===CHILD===\nslug: report-view\n---\n# View\n\nLayout.\n===END-CHILD===\n===END-SPLIT-REPORT==="
    )
    ladder = [{"model": "gpt-5-codex", "reasoning_effort": "high", "iteration_limit": 5}]
    turns = [
        {"match": "OPERATOR-DECISION", "answer": direct("light", ladder)},
        {"match": "SPLIT-REPORT", "answer": split},
        {
            "match": "COMMIT-MESSAGE",
            "cli": "codex",
            "answer": "Still going.",
            "files": {"wip.txt": "wip\n"},
            "repeat": True,
        },
    ]
    bot, room = await start_bot(tmp_path, servers.info, turns, {"report": INTENT}, xmpp_peer)
    try:
        await room.say("/start report")
        spent = await room.bot_says(r"no escalation step left")
        await room.react(stanza_id(spent, room.room), "✂️")
        await room.bot_says(r"split into report-data, report-view")
        assert bot.phase("report") == "split"
        assert bot.phase("report-data") == bot.phase("report-view") == "planned"
        assert (tmp_path / "repo" / "docs" / "intent" / "report-view.md").exists()
    finally:
        await bot.stop()


async def test_requester_accepted_by_thumbs_up_stranger_refused_and_ignored(
    tmp_path: Path, servers, xmpp_peer
) -> None:
    ask = operator_answer(
        {"decision": "needs_human", "reason": "unclear", "human_action": "Which storage?"}
    )
    turns = [{"match": "OPERATOR-DECISION", "answer": ask}]
    requester_jid = servers.info["xmpp"]["accounts"]["requester"]["jid"]
    bot, room = await start_bot(
        tmp_path,
        servers.info,
        turns,
        {"report": INTENT, "other": INTENT},
        xmpp_peer,
        requesters=(requester_jid,),
    )
    try:
        requester = await xmpp_peer("requester")
        await requester.join(room.room, "requester")
        stranger = await xmpp_peer("stranger")
        # The stranger even takes the owner's nick: a nick is never an identity.
        await stranger.join(room.room, "owner2")
        await stranger.say(room.room, "/start other", room=True)
        await room.bot_says(r"(not allowed|may not)")
        assert bot.phase("other") == "planned"

        await requester.say(room.room, "/start report", room=True)
        request = await room.bot_says(r"request #?\d+")
        assert bot.phase("report") == "planned"  # nothing happens before an owner accepts
        await room.react(stanza_id(request, room.room), "👍")
        question = await room.bot_says(r"Which storage\?")
        assert bot.phase("report") == "needs_human"

        await stranger.reply(room.room, "local disk", stanza_id(question, room.room), room=True)
        asked = await room.say("/status report")
        status = await room.bot_replies_to(asked)
        assert "needs" in status["body"]
        assert bot.phase("report") == "needs_human"
        rows = bot.query("SELECT state FROM questions")
        assert [r["state"] for r in rows] == ["open"]
    finally:
        await bot.stop()


async def test_bot_killed_mid_run_and_restarted_ends_clear_and_loses_nothing(
    tmp_path: Path, servers, xmpp_peer
) -> None:
    started = tmp_path / "builder-started"
    turns = [
        {"match": "OPERATOR-DECISION", "answer": direct("light")},
        {
            "match": "COMMIT-MESSAGE",
            "cli": "codex",
            "answer": "working",
            "hang": "before_output",
            "touch_file": str(started),
        },
    ]
    fifo = Fifo(started)
    bot, room = await start_bot(tmp_path, servers.info, turns, {"report": INTENT}, xmpp_peer)
    try:
        await room.say("/start report")
        await room.bot_says(r"operator chose the light lane")
        started_pid = int(await fifo.line(WITHIN))  # the agent itself is running now
        await bot.kill()
        await bot.start()
        told = await room.bot_says(r"report: failed at builder")
        assert "worker stopped" in told["body"]
        # The agent the killed bot had started does not run on unattended.
        with contextlib.suppress(psutil.NoSuchProcess):
            psutil.Process(started_pid).wait(timeout=5)
        assert not psutil.pid_exists(started_pid)
        assert bot.phase("report") == "failed"
        card = bot.card("report")
        assert card["failure_stage"] == "builder"
        await bot.stop()
        # Every notification was sent exactly once: none waits, none went twice.
        rows = bot.query("SELECT text, state FROM outbox ORDER BY id")
        assert all(r["state"] == "sent" for r in rows)
        texts = [r["text"] for r in rows]
        assert len(texts) == len(set(texts))
    finally:
        fifo.close()
        await bot.stop()


async def test_a_failed_operator_run_is_answered_then_retried_to_deployed(
    tmp_path: Path, servers, xmpp_peer
) -> None:
    # The most common failure with real models: an answer that breaks its contract.
    # The room is told how to go on, and both ways it names work, to deployed.
    deploys = tmp_path / "deploys.log"
    script = tmp_path / "deploy.sh"
    script.write_text(f'#!/bin/sh\necho "$1" >> {deploys}\n')
    script.chmod(0o755)
    bad = operator_answer({"decision": "direct_builder", "colour": "red"})
    turns = [
        {"match": "OPERATOR-DECISION", "answer": bad},
        {"match": "OPERATOR-DECISION", "answer": "no decision at all"},
        {"match": "OPERATOR-DECISION", "answer": direct("light")},
        BUILD,
        APPROVE,
    ]
    extra = f'[deploy]\ncommand = ["{script}", "{{commit}}"]\n'
    bot, room = await start_bot(
        tmp_path, servers.info, turns, {"report": INTENT}, xmpp_peer, extra=extra
    )
    try:
        # An earlier test's killed bot may still hold the nick in a hibernating session;
        # speak only once this bot has joined (its own log says so).
        await bot.logged(r"xmpp transport online")
        await room.say("/start report")
        failed = await room.bot_says(r"the operator run failed")
        assert "colour" in failed["body"] and "/retry report" in failed["body"]
        # The first way: a reply to the failure with more context.
        await room.reply("Just one file, please.", stanza_id(failed, room.room))
        again = await room.bot_says(r"the operator run failed")
        assert bot.phase("report") == "needs_human"
        # The second way: /retry, as the message says.
        retry = await room.say("/retry report")
        moved = await room.bot_replies_to(retry)
        assert "operator running" in moved["body"], moved["body"]
        await room.bot_says(r"🚀 report")
        card = bot.card("report")
        assert card["phase"] == "deployed" and card["failure_stage"] is None
        assert deploys.read_text().split() == [card["commit_hash"]]
        answers = [a["answer"] for a in json.loads(card["data"])["answers"]]
        assert answers == ["Just one file, please."]
        assert again["body"] != failed["body"]
        rows = bot.query("SELECT state FROM questions ORDER BY id")
        assert [r["state"] for r in rows] == ["answered", "cancelled"]
    finally:
        await bot.stop()
