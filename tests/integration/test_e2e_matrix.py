"""End to end over the real Synapse: the draft and the review flows, driven by the owner."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from tests.pipeline.harness import builder_answer, direct, review_answer

from .bot_process import BotProcess, bot_config, prepare, write_scenario

WITHIN = 30.0
INTENT = "# Reporting\n\nBuild the monthly report.\n"


async def _start(
    tmp_path: Path, servers, matrix_peer, turns, intents
) -> tuple[BotProcess, Any, str]:
    prepare(tmp_path, intents)
    write_scenario(tmp_path, turns)
    path = bot_config(tmp_path, servers.info, xmpp=False, matrix=True)
    owner = await matrix_peer("owner")
    room_id = servers.info["matrix"]["rooms"]["public"]["room_id"]
    bot = await BotProcess(tmp_path, path).start()
    await bot.logged(r"matrix transport online")
    return bot, owner, room_id


async def bot_says(owner, room_id: str, bot_id: str, pattern: str) -> dict[str, Any]:
    regex = re.compile(pattern, re.S)
    _, event = await owner.expect(
        lambda room, ev: (
            room == room_id
            and ev.get("sender") == bot_id
            and ev.get("type") == "m.room.message"
            and bool(regex.search((ev.get("content") or {}).get("body", "")))
        ),
        within=WITHIN,
    )
    return event


async def test_draft_dialogue_over_matrix(tmp_path: Path, servers, matrix_peer) -> None:
    turns = [
        {
            "match": "Owner: weekly",
            "answer": "===DRAFT-INTENT===\nslug: weekly-report\n---\n# Weekly report\n\nGoal.\n===END-DRAFT-INTENT===",
        },
        {
            "match": "Owner: PDF",
            "answer": "===DRAFT-QUESTION===\nHow often?\noptions: daily | weekly\n===END-DRAFT-QUESTION===",
        },
        {
            "match": "DRAFT-QUESTION",
            "answer": "===DRAFT-QUESTION===\nWhich format?\noptions: CSV | PDF\n===END-DRAFT-QUESTION===",
        },
    ]
    bot, owner, room = await _start(tmp_path, servers, matrix_peer, turns, {})
    bot_id = servers.info["matrix"]["accounts"]["bot"]["user_id"]
    try:
        await owner.say(room, "/draft a report for the team")
        first = await bot_says(owner, room, bot_id, r"Which format\?")
        content = first["content"]
        # A question rings the owner: an m.text mentioning them (m.notice stays silent).
        assert content["msgtype"] == "m.text"
        assert content["m.mentions"] == {"user_ids": [owner.user_id]}
        assert f"https://matrix.to/#/{owner.user_id}" in content["formatted_body"]
        await owner.reply(room, "PDF", first["event_id"])
        second = await bot_says(owner, room, bot_id, r"How often\?")
        await owner.react(room, second["event_id"], "2️⃣")
        await bot_says(owner, room, bot_id, r"weekly-report")
        card = bot.card("weekly-report")
        assert (card["kind"], card["phase"]) == ("intent", "planned")
        said = [turn[1] for turn in json.loads(card["data"])["conversation"]]
        assert said[:5] == ["a report for the team", "Which format?", "PDF", "How often?", "weekly"]
        assert (tmp_path / "repo" / "docs" / "intent" / "weekly-report.md").exists()
    finally:
        await bot.stop()


async def test_review_report_reaches_the_matrix_room(tmp_path: Path, servers, matrix_peer) -> None:
    turns = [
        {"match": "OPERATOR-DECISION", "answer": direct("light")},
        {
            "match": "COMMIT-MESSAGE",
            "cli": "codex",
            "answer": builder_answer("Add report"),
            "files": {"report.py": "x = 1\n"},
        },
        {"match": "REVIEW-RESULT", "answer": review_answer("approve", "Clean and small.")},
    ]
    bot, owner, room = await _start(tmp_path, servers, matrix_peer, turns, {"report": INTENT})
    bot_id = servers.info["matrix"]["accounts"]["bot"]["user_id"]
    try:
        command = await owner.say(room, "/start report")
        ack = await bot_says(owner, room, bot_id, r"report")
        assert ack["content"]["m.relates_to"]["m.in_reply_to"]["event_id"] == command
        assert (
            ack["content"]["msgtype"] == "m.notice" and "report" in ack["content"]["formatted_body"]
        )
        review = await bot_says(owner, room, bot_id, r"review approve")
        assert "Clean and small." in review["content"]["body"]
        assert "Clean and small." in review["content"]["formatted_body"]
        assert bot.phase("report") == "ready_for_deployment"
    finally:
        await bot.stop()
