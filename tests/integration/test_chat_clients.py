"""Chat that works in real clients (issue 14), over the real Prosody and Synapse:
a run's status message edited in place, markdown on Matrix, mentions on questions,
command prefixes other than "/", /diff, and help for the caller."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import aiohttp

from chatbot.transports.xmpp import stanzas as wire
from chatbot.transports.xmpp.outgoing import NS_REFERENCE
from tests.pipeline.harness import builder_answer, direct, operator_answer, review_answer

from .bot_process import BotProcess, bot_config, prepare, write_scenario
from .e2e import BOT_NICK, WITHIN, reply_target, stanza_id, start_bot

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
    # A fixer's prompt holds COMMIT-MESSAGE too: its own turn comes first.
    {
        "match": "line comments to address",
        "cli": "codex",
        "answer": builder_answer("Make it two"),
        "files": {"report.py": "x = 2\n"},
    },
    SLOW_BUILD,
    {"match": "REVIEW-RESULT", "answer": review_answer("approve"), "repeat": True},
]
# A question whose text is markdown with a script in it: Matrix must get the markdown
# rendered and the script as text; XMPP the words as written.
QUESTION = "Which **storage**? <script>alert(1)</script>"
ASK = [
    {
        "match": "OPERATOR-DECISION",
        "answer": operator_answer(
            {"decision": "needs_human", "reason": "unclear", "human_action": QUESTION}
        ),
    }
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
            if message["body"].startswith("⏹"):
                break  # the outcome
        # Each is a correction of the one message: its running time, then its latest steps.
        assert any("running for" in body for body in corrections), corrections
        assert any("Latest step: ran: pytest -q" in body for body in corrections), corrections
        assert "builder run ok after" in corrections[-1], corrections

        # /diff of the commit the builder made, with the "!" prefix: a summary, then the
        # file with its line numbers in a code block.
        await room.bot_says(r"review approve")
        asked = await room.say("!diff report")
        summary = await room.bot_replies_to(asked)
        assert "report: commit " in summary["body"] and "1. report.py +1 -0" in summary["body"]
        file = await room.bot_says(r"📄 1/1 report.py")
        assert "```\n@@ -0,0 +1 @@\n   1 + x = 1\n```" in file["body"]

        # A reply quoting the line is a comment on it: the fixer gets it, its commit
        # answers it, and the review of that commit says so.
        await room.reply("> 1 + x = 1\nmake it two", stanza_id(file, room.room))
        kept = await room.bot_says(r"💬 report: .* on report\.py:1:")
        assert "x = 1" in kept["body"] and "make it two" in kept["body"]
        await room.bot_says(r"report: fixer committed .*\nIt answers 1 line comment")
        await room.bot_says(r"report: review approve")
        calls = [json.loads(line) for line in (tmp_path / "calls.jsonl").read_text().splitlines()]
        [fixer] = [c for c in calls if "line comments to address" in c.get("stdin", "")]
        assert '"text": "make it two"' in fixer["stdin"] and '"code": "x = 1"' in fixer["stdin"]
    finally:
        await bot.stop()


async def test_prefixes_mentions_and_help_for_the_caller_over_xmpp(
    tmp_path: Path, servers, xmpp_peer
) -> None:
    bot, room = await start_bot(tmp_path, servers.info, ASK, {"report": INTENT}, xmpp_peer)
    try:
        asked = await room.say("!status")
        assert "1 card\n" in (await room.bot_replies_to(asked))["body"]

        await room.say("!start report")
        question = await room.bot_says(r"Which \*\*storage\*\*")
        # The owner's room nick first (what clients notify on), marked as a mention.
        assert question["body"].startswith("owner: ")
        [mention] = question.xml.findall(f"{{{NS_REFERENCE}}}reference")
        assert mention.get("type") == "mention"
        assert mention.get("uri") == f"xmpp:{room.room}/owner"
        assert (mention.get("begin"), mention.get("end")) == ("0", "5")
        # XMPP keeps plain text: the words as written, no markup added.
        assert QUESTION in question["body"]

        # Nothing else mentions anyone: the answer to the next command has no reference.
        asked = await room.say("!status report")
        status = await room.bot_replies_to(asked)
        assert status.xml.find(f"{{{NS_REFERENCE}}}reference") is None
        assert not status["body"].startswith("owner")

        # A stranger may ask for /help alone, and learns how to get in.
        stranger = await xmpp_peer("stranger")
        await stranger.join(room.room, "stranger")
        help_id = await stranger.say(room.room, "!help", room=True)
        answer = await stranger.expect(
            lambda m: m["from"].resource == BOT_NICK and reply_target(m) == help_id,
            within=WITHIN,
        )
        assert "stranger@" in answer["body"] and "!start" not in answer["body"]
    finally:
        await bot.stop()


async def notifications(homeserver: str, token: str) -> list[dict[str, Any]]:
    """What the homeserver would push to the user's phone (GET /notifications)."""
    url = f"{homeserver}/_matrix/client/v3/notifications"
    async with aiohttp.ClientSession() as session:
        async with session.get(url, headers={"Authorization": f"Bearer {token}"}) as response:
            assert response.status == 200, await response.text()
            return (await response.json())["notifications"]


async def test_prefixes_markdown_and_a_mention_that_rings_over_matrix(
    tmp_path: Path, servers, matrix_peer
) -> None:
    prepare(tmp_path, {"report": INTENT})
    write_scenario(tmp_path, ASK)
    path = bot_config(tmp_path, servers.info, xmpp=False, matrix=True)
    owner = await matrix_peer("owner")
    room_id = servers.info["matrix"]["rooms"]["public"]["room_id"]
    bot_id = servers.info["matrix"]["accounts"]["bot"]["user_id"]
    homeserver = servers.info["matrix"]["homeserver"]

    def from_bot(pattern: str):
        return lambda room, ev: (
            room == room_id
            and ev.get("sender") == bot_id
            and pattern in (ev.get("content") or {}).get("body", "")
        )

    # The servers and their accounts serve the whole session: what other tests' bots
    # made ring for this owner before is not this test's.
    earlier = {
        n["event"]["event_id"] for n in await notifications(homeserver, owner.client.access_token)
    }
    bot = await BotProcess(tmp_path, path).start()
    try:
        await bot.logged(r"matrix transport online")
        await owner.say(room_id, "!start report")
        _, moved = await owner.expect(from_bot("report: "), within=WITHIN)
        _, asked = await owner.expect(from_bot("Which **storage**?"), within=WITHIN)
        content = asked["content"]
        # The mention: m.mentions with the owner's id, a pill, and a message that rings.
        assert content["m.mentions"] == {"user_ids": [owner.user_id]}
        assert content["msgtype"] == "m.text"
        assert content["body"].startswith(f"{owner.user_id}: ")
        html = content["formatted_body"]
        assert f'<a href="https://matrix.to/#/{owner.user_id}">' in html
        # Markdown reaches formatted_body rendered; the script does not, as a tag.
        assert "<strong>storage</strong>" in html
        assert "<script" not in html and "&lt;script&gt;" in html
        assert QUESTION in content["body"]  # plain body stays as written
        # Every other message of the bot mentions nobody, and stays a quiet notice.
        assert moved["content"]["m.mentions"] == {}
        assert moved["content"]["msgtype"] == "m.notice"

        pushed = await notifications(homeserver, owner.client.access_token)
        from_the_bot = [
            n
            for n in pushed
            if n["event"]["sender"] == bot_id and n["event"]["event_id"] not in earlier
        ]
        assert [n["event"]["event_id"] for n in from_the_bot] == [asked["event_id"]], [
            (n["event"].get("type"), n["event"].get("content")) for n in from_the_bot
        ]
        assert from_the_bot[0]["actions"] and "notify" in from_the_bot[0]["actions"]
        assert any(
            isinstance(a, dict) and a.get("set_tweak") == "highlight" and a.get("value", True)
            for a in from_the_bot[0]["actions"]
        )
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
            if edit["content"]["m.new_content"]["body"].startswith("⏹"):
                break  # the outcome
        bodies = [content["m.new_content"]["body"] for content in edits]
        assert "builder run ok after" in bodies[-1], bodies
        assert any("Latest step:" in body for body in bodies), bodies
        assert all(content["body"].startswith("* ") for content in edits)  # the fallback
    finally:
        await bot.stop()
