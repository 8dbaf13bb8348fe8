"""Chat that works in real clients (issue 14), over the real Prosody and Synapse:
a run's status message edited in place, markdown on Matrix, mentions on questions,
command prefixes other than "/", /diff, and help for the caller."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from chatbot.transports import xmpp_stanzas as wire
from tests.pipeline.harness import builder_answer, direct, review_answer

from .bot_process import BotProcess, bot_config, prepare, write_scenario
from .e2e import WITHIN, start_bot

INTENT = "# Reporting\n\nBuild the monthly report.\n"
FAST_PROGRESS = ("progress_interval_s = 0.4",)
STEPS = [{"command": "pytest -q"}, {"file": "report.py"}, {"command": "git diff --stat"}]
SLOW_BUILD = {
    "match": "COMMIT-MESSAGE",
    "cli": "codex",
    "answer": builder_answer("Add report"),
    "files": {"report.py": "x = 1\n"},
    "steps": STEPS,
    "step_delay": 0.6,
}
TURNS = [
    {"match": "OPERATOR-DECISION", "answer": direct("light")},
    SLOW_BUILD,
    {"match": "REVIEW-RESULT", "answer": review_answer("approve")},
]


def correction_of(message: Any) -> str | None:
    element = message.xml.find(f"{{{wire.NS_CORRECT}}}replace")
    return element.get("id") if element is not None else None


async def test_a_runs_status_message_is_corrected_in_place_over_xmpp(
    tmp_path: Path, servers, xmpp_peer
) -> None:
    bot, room = await start_bot(
        tmp_path, servers.info, TURNS, {"report": INTENT}, xmpp_peer, bot_lines=FAST_PROGRESS
    )
    try:
        await bot.logged(r"xmpp transport online")
        await room.say("/start report")
        status = await room.bot_says(r"report: builder run started")
        original = status["id"]
        corrections = []
        while True:
            message = await room.peer.expect(
                lambda m: m["type"] == "groupchat" and correction_of(m) == original,
                within=WITHIN,
            )
            corrections.append(message["body"])
            if "builder run ok" in message["body"]:
                break
        # Each is a correction of the one message: its running time, then its latest steps.
        assert any("running for" in body for body in corrections), corrections
        assert any("Latest step: ran: pytest -q" in body for body in corrections), corrections
        assert "builder run ok after" in corrections[-1]
    finally:
        await bot.stop()


async def test_a_runs_status_message_is_replaced_in_place_over_matrix(
    tmp_path: Path, servers, matrix_peer
) -> None:
    prepare(tmp_path, {"report": INTENT})
    write_scenario(tmp_path, TURNS)
    path = bot_config(tmp_path, servers.info, xmpp=False, matrix=True, bot_lines=FAST_PROGRESS)
    owner = await matrix_peer("owner")
    room_id = servers.info["matrix"]["rooms"]["public"]["room_id"]
    bot_id = servers.info["matrix"]["accounts"]["bot"]["user_id"]
    bot = await BotProcess(tmp_path, path).start()
    try:
        await bot.logged(r"matrix transport online")
        await owner.say(room_id, "/start report")
        _, status = await owner.expect(
            lambda room, ev: (
                room == room_id
                and ev.get("sender") == bot_id
                and "builder run started" in (ev.get("content") or {}).get("body", "")
            ),
            within=WITHIN,
        )
        original = status["event_id"]
        edits: list[dict[str, Any]] = []
        while True:
            _, edit = await owner.expect(
                lambda room, ev: (
                    room == room_id
                    and ((ev.get("content") or {}).get("m.relates_to") or {}).get("event_id")
                    == original
                    and ev["content"]["m.relates_to"].get("rel_type") == "m.replace"
                ),
                within=WITHIN,
            )
            edits.append(edit["content"])
            if "builder run ok" in edit["content"]["m.new_content"]["body"]:
                break
        bodies = [content["m.new_content"]["body"] for content in edits]
        assert any("Latest step:" in body for body in bodies), bodies
        assert all(content["body"].startswith("* ") for content in edits)  # the fallback
    finally:
        await bot.stop()
