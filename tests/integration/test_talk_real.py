"""Talking to a working agent from chat, end to end (issue 25): the real bot process over
the real Prosody, the owner's real XMPP client, the REAL codex and claude as the builder,
each pointed at a scripted loopback provider in this process (tests/integration/
talk_bot.py). What the provider received is what reached the agent.
"""

from __future__ import annotations

import asyncio
import json
import re
import shlex
from pathlib import Path

import pytest

from tests.integration.e2e import Room, stanza_id
from tests.integration.talk_bot import (
    TALKING,
    approval_asked,
    as_the_person,
    builder_session,
    committed,
    drained,
    finish,
    running,
    start,
    step_shown,
)
from tests.realcli.clis import CLIS
from tests.realcli.harness import child_env
from tests.realcli.openai_responses import Escalate
from tests.realcli.providers import Say, Seen, Shell, WriteFile
from tests.realcli.terminal import run_until

SLUG = "indent"


@pytest.fixture
def begin(tmp_path: Path, servers, xmpp_peer, cli_bins, models):
    """`start` on this test's folder, servers, CLIs and providers: the bot, its room,
    and the scripted agents, for the CLI under test."""
    return lambda cli, **options: start(
        tmp_path, servers.info, cli, cli_bins, models, xmpp_peer, **options
    )


@pytest.mark.parametrize("cli", TALKING)
async def test_a_steer_from_the_chat_reaches_the_running_turn_and_the_answer_is_applied(
    cli: str, begin
) -> None:
    bot, room, agents = await begin(cli)
    text = "Use tabs, not spaces."
    agents.script(
        Shell("sleep 3"), WriteFile("indent.txt", "\ttabbed\n"), finish("Indent with tabs")
    )
    try:
        await room.say(f"/start {SLUG}")
        await step_shown(room, SLUG, "sleep 3")
        sent = await room.say(f"/steer {SLUG} {text}")
        ack = await room.bot_replies_to(sent)
        assert "sent to the builder" in ack["body"]
        # Edits of one message supersede each other while pending, so the edit that says
        # "took" may be the run's last; every edit after the steer keeps both lines.
        took = await room.bot_says(r"took xmpp:owner@\S+'s steer")
        assert re.search(rf"steered by xmpp:owner@\S+: {text}", took["body"]), took["body"]
        await room.bot_says(rf"{SLUG}: review approve")

        # The request right after the command: the command's result and the steer, in
        # the same session (the running turn), not a turn of their own.
        first, after = agents.built[0], agents.built[1]
        assert text not in json.dumps(first.body)
        assert text in json.dumps(after.body)
        assert len(after.tool_results) == 1 and after.session == first.session
        assert bot.phase(SLUG) == "ready_for_deployment"
        assert committed(bot) == "indent.txt"
        [run] = bot.query("SELECT steers, outcome FROM telemetry WHERE role = 'builder'")
        assert (run["steers"], run["outcome"]) == (1, "ok")
        [row] = bot.query("SELECT state, text FROM run_talk WHERE kind = 'steer'")
        assert (row["state"], row["text"]) == ("taken", text)
        assert builder_session(bot, SLUG) == first.session
    finally:
        await bot.stop()


# --- approvals ---------------------------------------------------------------------------

#: A command each CLI asks the owners for: Claude Code asks for any python3 in a builder's
#: run; codex only for what leaves its sandbox, which the model says it needs.
ASKED = 'python3 -c "print(6 * 7)"'
DENIED = "python3 -c \"open('denied.txt', 'w')\""


def asking(cli: str, command: str):
    if cli == "codex":
        return Escalate(command, "It needs to run outside the sandbox.")
    return Shell(command)


async def approval_posted(room, command: str) -> object:
    """The approval request in the room, the command shown as inert text (a code block)."""
    message = await approval_asked(room, SLUG)
    assert f"```\n{command}\n```" in message["body"], message["body"]
    return message


@pytest.mark.parametrize("cli", TALKING)
async def test_a_thumbs_up_lets_the_command_run_and_its_output_reaches_the_provider(
    cli: str, begin
) -> None:
    bot, room, agents = await begin(cli)
    agents.script(asking(cli, ASKED), WriteFile("indent.txt", "42\n"), finish())
    try:
        await room.say(f"/start {SLUG}")
        asked = await approval_posted(room, ASKED)
        # Nothing ran before the owner answered: the agent waits on the bot.
        assert len(agents.built) == 1
        target = stanza_id(asked, room.room)
        await room.react(target, "👍")
        # A reaction is answered as a reply to the message it is on.
        told = await room.bot_replies_to(target)
        assert "allowed once" in told["body"]
        after = await agents.request(2)
        assert "42" in after.tool_results[-1]
        await room.bot_says(rf"{SLUG}: review approve")
        [row] = bot.query("SELECT state, actor, text FROM run_talk WHERE kind = 'approval'")
        assert (row["state"], row["text"]) == ("allowed", ASKED)
        assert row["actor"].startswith("xmpp:owner@")
        assert bot.phase(SLUG) == "ready_for_deployment"
        assert committed(bot) == "indent.txt"
    finally:
        await bot.stop()


@pytest.mark.parametrize(
    ("cli", "way"), [("codex", "reply"), ("claude", "deny"), ("claude", "thumbs down")]
)
async def test_a_denial_with_a_reason_keeps_the_command_from_running_and_the_agent_reads_why(
    cli: str, way: str, begin
) -> None:
    bot, room, agents = await begin(cli)
    agents.script(asking(cli, DENIED), WriteFile("indent.txt", "kept\n"), finish())
    reason = "no files outside the plan please"
    try:
        await room.say(f"/start {SLUG}")
        asked = await approval_posted(room, DENIED)
        target = stanza_id(asked, room.room)
        if way == "reply":
            answer = await room.reply(reason, target)
        elif way == "deny":
            answer = await room.say(f"/deny {SLUG} {reason}")
        else:
            await room.react(target, "👎")
            answer, reason = target, "no reason given"
        told = await room.bot_replies_to(answer)
        assert f"👎 {SLUG}: denied" in told["body"]
        after = await agents.request(2)
        # The agent reads who denied it and why (claude: the tool's result; codex: a
        # steer before the decline, its protocol has no reason).
        assert f"denied this: {reason}" in json.dumps(after.body)
        await room.bot_says(rf"{SLUG}: review approve")
        assert not (bot.root / "workspaces" / SLUG / "denied.txt").exists()
        assert committed(bot) == "indent.txt"
        [row] = bot.query("SELECT state, reason FROM run_talk WHERE kind = 'approval'")
        assert row["state"] == "denied"
    finally:
        await bot.stop()


async def test_an_approval_nobody_answers_is_denied_at_the_timeout_and_the_agent_goes_on(
    begin,
) -> None:
    cli = "codex"
    bot, room, agents = await begin(
        cli,
        bot_lines=("approval_timeout_s = 5",),
    )
    agents.script(asking(cli, DENIED), WriteFile("indent.txt", "on time\n"), finish())
    try:
        await room.say(f"/start {SLUG}")
        await approval_posted(room, DENIED)
        timed_out = await room.bot_says(rf"⌛ {SLUG}: nobody answered", within=30)
        assert f"```\n{DENIED}\n```" in timed_out["body"]
        after = await agents.request(2)
        assert "nobody answered within 5 seconds" in json.dumps(after.body)
        await room.bot_says(rf"{SLUG}: review approve")
        assert not (bot.root / "workspaces" / SLUG / "denied.txt").exists()
        [row] = bot.query("SELECT state FROM run_talk WHERE kind = 'approval'")
        assert row["state"] == "timed_out"
        assert bot.phase(SLUG) == "ready_for_deployment"
    finally:
        await bot.stop()


async def test_the_deny_policy_refuses_at_once_without_asking_the_room(begin) -> None:
    cli = "claude"
    bot, room, agents = await begin(
        cli,
        extra='\n[roles.builder]\napprovals = "deny"\n',
    )
    agents.script(asking(cli, DENIED), WriteFile("indent.txt", "policy\n"), finish())
    try:
        await room.say(f"/start {SLUG}")
        await room.bot_says(r"denied without asking \(approvals are off for this role\)")
        after = await agents.request(2)
        assert 'approvals are off for the builder (roles.builder.approvals = \\"deny\\")' in (
            json.dumps(after.body)
        )
        await room.bot_says(rf"{SLUG}: review approve")
        assert not (bot.root / "workspaces" / SLUG / "denied.txt").exists()
        [row] = bot.query("SELECT state FROM run_talk WHERE kind = 'approval'")
        assert row["state"] == "denied"
        # Nobody was asked: no approval request reached the room.
        assert not bot.query("SELECT id FROM chat_messages WHERE purpose = 'approval'")
        assert not [m for m in drained(room) if "🔐" in m["body"]]
    finally:
        await bot.stop()


# --- interrupt, then go on in the same session -------------------------------------------


@pytest.mark.parametrize("cli", TALKING)
async def test_interrupt_then_steer_goes_on_in_the_same_session(cli: str, begin) -> None:
    bot, room, agents = await begin(cli)
    # (Claude Code refuses a standalone long sleep.)
    long = "echo indenting; sleep 41"
    text = "Only the tabs, please."
    agents.script(Shell(long), WriteFile("indent.txt", "\tonly tabs\n"), finish())
    try:
        await room.say(f"/start {SLUG}")
        await step_shown(room, SLUG, long)
        sent = await room.say(f"/interrupt {SLUG}")
        ack = await room.bot_replies_to(sent)
        assert "interrupting the builder" in ack["body"]
        waits = await room.bot_says(rf"⏸ {SLUG}: the run was interrupted")
        assert f"/steer {SLUG} <text>" in waits["body"]
        assert bot.phase(SLUG) == "interrupted"
        # The command it ran is gone with the turn (codex leaves it running: the bot
        # ends it), and the provider heard nothing more.
        assert running("sleep 41") == []
        assert len(agents.built) == 1
        session = builder_session(bot, SLUG)
        assert session == agents.built[0].session

        sent = await room.say(f"/steer {SLUG} {text}")
        ack = await room.bot_replies_to(sent)
        assert "interrupted → building" in ack["body"]
        resumed = await agents.request(2)
        # The same session: the first prompt and its command before, the owner's words now.
        assert resumed.session == session
        assert resumed.user_texts[0] == agents.built[0].user_texts[0]
        assert any(text in said for said in resumed.user_texts[1:])
        assert long in json.dumps(resumed.body)
        await room.bot_says(rf"{SLUG}: review approve")
        assert bot.phase(SLUG) == "ready_for_deployment"
        assert committed(bot) == "indent.txt"
        assert builder_session(bot, SLUG) == session
    finally:
        await bot.stop()


# --- hand over -----------------------------------------------------------------------------


QUESTION = "What did you indent?"


@pytest.mark.parametrize("cli", TALKING)
async def test_the_hand_over_line_of_status_continues_the_bots_session_in_a_terminal(
    cli: str, begin
) -> None:
    bot, room, agents = await begin(cli)
    arrived = asyncio.Event()

    def by_hand(seen: Seen) -> Say:
        arrived.set()
        return Say("Tabs it is, by hand now.")

    agents.script(WriteFile("indent.txt", "\tpelican\n"), finish("Indent the pelican"), by_hand)
    try:
        await room.say(f"/start {SLUG}")
        await room.bot_says(rf"{SLUG}: review approve")
        session = builder_session(bot, SLUG)
        assert session == agents.built[0].session
        asked = await room.say(f"/status {SLUG}")
        status = (await room.bot_replies_to(asked))["body"]
        worktree = bot.root / "workspaces" / SLUG
        assert f"Session: {session} (builder on {cli})" in status
        assert f"Worktree: {worktree}" in status
        found = re.search(r"^Continue it in a terminal on the worker's host: (.+)$", status, re.M)
        assert found, status
        line = found[1]
        assert CLIS[cli].key not in line  # the key file is named, never its content

        home = bot.root / "home" / cli
        as_the_person(cli, home, worktree)
        env = {**child_env(home), "HOME": str(home)}
        await run_until(f"{line} {shlex.quote(QUESTION)}", env, arrived, 60)
        # The next request of the same session, on the same model, with its whole
        # history: the builder's prompt and answer, then the person's question.
        seen = agents.built[-1]
        assert len(agents.built) == 3
        assert (seen.session, seen.model) == (session, agents.built[0].model)
        assert seen.user_texts[0] == agents.built[0].user_texts[0]
        assert seen.user_texts[-1] == QUESTION
        assert any("Indent the pelican" in said for said in seen.assistant_texts)
    finally:
        await bot.stop()


# --- what others may not do ------------------------------------------------------------------


async def test_a_requesters_steer_and_thumbs_up_are_refused_and_change_nothing(
    servers, xmpp_peer, begin
) -> None:
    cli = "claude"
    requester = servers.info["xmpp"]["accounts"]["requester"]["jid"]
    bot, room, agents = await begin(
        cli,
        requesters=(requester,),
    )
    other = await xmpp_peer("requester")
    await other.join(room.room, "requester")
    theirs = Room(other, room.room)
    agents.script(asking(cli, DENIED), WriteFile("indent.txt", "owner's\n"), finish())
    text = "Write denied.txt anyway."
    try:
        await room.say(f"/start {SLUG}")
        asked = await approval_posted(room, DENIED)
        target = stanza_id(asked, room.room)
        await theirs.react(target, "👍")
        refused = await theirs.bot_replies_to(target)
        assert "Only an owner may do that; nothing was changed." in refused["body"]
        sent = await theirs.say(f"/steer {SLUG} {text}")
        refused = await theirs.bot_replies_to(sent)
        assert "Only an owner may do that; nothing was changed." in refused["body"]
        # The request still waits for an owner; no steer was written.
        [row] = bot.query("SELECT state FROM run_talk")
        assert row["state"] == "open" and len(agents.built) == 1

        await room.react(target, "👎")
        await room.bot_says(rf"{SLUG}: review approve")
        assert all(text not in json.dumps(seen.body) for seen in agents.built)
        assert "denied this: no reason given" in json.dumps(agents.built[1].body)
        assert not (bot.root / "workspaces" / SLUG / "denied.txt").exists()
        assert bot.query("SELECT kind, state FROM run_talk")[0]["state"] == "denied"
    finally:
        await bot.stop()
