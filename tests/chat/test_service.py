"""Commands through ChatIntake.handle: what moves, what is queued, what is answered where."""

from __future__ import annotations

from pathlib import Path

import pytest

from chatbot.chat.authority import Authority
from chatbot.chat.commands import BY_NAME
from chatbot.chat.intake import ChatIntake
from chatbot.domain.phases import Kind, Phase
from chatbot.domain.transitions import Action, By
from chatbot.store import Store, telemetry
from chatbot.store import cards as card_store
from chatbot.store.telemetry import RunRecord
from chatbot.transports.base import Identity

from .conftest import (
    MATRIX_OWNER,
    OWNER,
    REQUESTER,
    ROOM,
    STRANGER,
    Env,
    dm,
    edit,
    make_env,
    msg,
)


async def test_start_moves_the_card_queues_the_operator_and_replies_in_place(env: Env) -> None:
    card = await env.card("login")
    command = msg("/start login")
    row = await env.one(command)
    assert await env.phase("login") is Phase.OPERATOR_RUNNING
    assert [(j.kind, j.card_id) for j in await env.jobs()] == [("operator", card.id)]
    # The answer goes where the command came from, as a reply to it, via the outbox.
    assert (row.transport, row.room, row.target_kind) == ("xmpp", ROOM.id, "room")
    assert row.reply_to == command.envelope.message_id
    assert row.card_id == card.id and row.purpose == "reply" and row.state == "pending"
    assert "login" in row.text and "operator running" in row.text and "operator run" in row.text
    view = await env.board.reads.view("login")
    assert view.events[-1].actor == "xmpp:owner@example.org"


async def test_direct_chat_answers_go_to_the_person(env: Env) -> None:
    await env.card("login")
    command = dm("/start login")
    row = await env.one(command)
    assert (row.target_kind, row.room, row.reply_to) == (
        "person",
        OWNER.id,
        command.envelope.message_id,
    )


async def test_matrix_owner_is_an_owner_too(env: Env) -> None:
    from chatbot.transports.base import Room

    await env.card("login")
    room = Room("matrix", "!abc:example.org")
    row = await env.one(msg("/start login", MATRIX_OWNER, chat=room))
    assert row.transport == "matrix" and row.room == room.id
    assert await env.phase("login") is Phase.OPERATOR_RUNNING


@pytest.mark.parametrize(
    "command, phase, fields, after, job",
    [
        ("/split login", Phase.PLANNED, {}, Phase.SPLIT_REQUESTED, "planner"),
        ("/inspect login", Phase.PLANNED, {}, Phase.INSPECTOR_RUNNING, "inspector"),
        ("/fix login", Phase.FAILED, {"failure_stage": "builder"}, Phase.FIXER_RUNNING, "fixer"),
        ("/retry login", Phase.FAILED, {"failure_stage": "builder"}, Phase.BUILDING, "builder"),
        ("/cancel login", Phase.BUILDING, {}, Phase.PLANNED, None),
        ("/archive login", Phase.PLANNED, {}, Phase.ARCHIVED, None),
        (
            "/deploy login",
            Phase.READY_FOR_DEPLOYMENT,
            {"commit_hash": "abc123"},
            Phase.READY_FOR_DEPLOYMENT,
            "deploy",
        ),
    ],
)
async def test_owner_actions(
    env: Env, command: str, phase: Phase, fields: dict, after: Phase, job: str | None
) -> None:
    await env.card("login", phase, **fields)
    row = await env.one(msg(command))
    assert await env.phase("login") is after, row.text
    assert [j.kind for j in await env.jobs()] == ([job] if job else [])
    assert row.purpose == "reply"


async def test_research_on_a_research_card(env: Env) -> None:
    await env.card("r-1", kind=Kind.RESEARCH)
    await env.one(msg("/research r-1"))
    assert await env.phase("r-1") is Phase.RESEARCH_REQUESTED
    assert [j.kind for j in await env.jobs()] == ["researcher"]


@pytest.mark.parametrize(
    "mode, expected",
    [("", "implementation_status"), ("status", "implementation_status"), ("route", "route_next")],
)
async def test_inspect_modes_reach_the_job(env: Env, mode: str, expected: str) -> None:
    await env.card("login")
    await env.one(msg(f"/inspect login {mode}".strip()))
    (job,) = await env.jobs()
    assert job.payload["mode"] == expected


async def test_draft_starts_a_dialogue_kept_in_its_chat(env: Env) -> None:
    row = await env.one(dm("/draft a login page\nwith two fields"))
    card = await env.board.reads.card("draft-1")
    assert card.phase is Phase.DRAFT_RUNNING
    assert card.data.conversation == [("owner", "a login page\nwith two fields")]
    assert card.data.origin == {"transport": "xmpp", "target_kind": "person", "target": OWNER.id}
    assert [j.kind for j in await env.jobs()] == ["planner"]
    assert "draft-1" in row.text and row.card_id == card.id


async def test_unknown_slug_gets_the_closest_slugs(env: Env) -> None:
    await env.card("login-page")
    await env.card("logout-page")
    row = await env.one(msg("/start login-pag"))
    assert "no card 'login-pag'" in row.text
    assert "login-page" in row.text
    assert await env.jobs() == []


async def test_unknown_slug_without_anything_close(env: Env) -> None:
    await env.card("login-page")
    row = await env.one(msg("/status zzz"))
    assert row.text == "There is no card 'zzz'."


async def test_refused_transition_names_the_phase_and_what_is_allowed(env: Env) -> None:
    await env.card("login", Phase.DEPLOYED)
    row = await env.one(msg("/start login"))
    assert row.purpose == "refusal"
    assert "deployed" in row.text and "/start" in row.text
    assert "/inspect" in row.text and "/archive" in row.text
    assert await env.phase("login") is Phase.DEPLOYED


async def test_deploy_without_a_commit_is_refused_by_the_board(env: Env) -> None:
    await env.card("login", Phase.READY_FOR_DEPLOYMENT)
    row = await env.one(msg("/deploy login"))
    assert row.text.startswith("Refused:") and "commit" in row.text
    assert await env.jobs() == []


@pytest.mark.parametrize("text", ["/start", "/start Bad_Slug!", "/inspect x deep", "/accept x"])
async def test_wrong_arguments_get_the_usage_line(env: Env, text: str) -> None:
    row = await env.one(msg(text))
    name = text.split()[0][1:]
    assert f"Usage: {BY_NAME[name].usage}" in row.text


async def test_unknown_command_points_at_help(env: Env) -> None:
    row = await env.one(msg("/statsu"))
    assert "/status" in row.text and "/help" in row.text


async def test_help_is_answered(env: Env) -> None:
    row = await env.one(msg("/help all"))
    assert "/accept <request>" in row.text and "🗄️" in row.text


async def test_board_status(env: Env) -> None:
    await env.card("a")
    await env.card("b", Phase.NEEDS_HUMAN)
    await env.card("c")
    await env.ask("b", "Which database?")
    await env.one(msg("/start a"))
    row = await env.one(msg("/status"))
    text = row.text
    assert text.startswith("3 cards")
    assert "planned: 1" in text and "operator running: 1" in text and "needs human: 1" in text
    assert "operator a" in text  # the running job, with its card
    assert "b (#1): Which database?" in text
    assert "planned: c" in text


async def test_board_status_of_an_empty_board(env: Env) -> None:
    row = await env.one(msg("/status"))
    assert row.text == "The board is empty."


async def test_long_status_is_cut_and_says_how_much(store: Store, tmp_path: Path) -> None:
    env = make_env(store, tmp_path, max_chars=150)
    for n in range(60):
        await env.card(f"card-number-{n:02d}", Phase.PLANNED if n % 2 else Phase.DEPLOYED)
    row = await env.one(msg("/status"))
    assert len(row.text) <= 150
    assert row.text.split("\n")[-1].endswith("more lines left out.")


async def test_status_names_a_few_cards_per_phase_and_counts_the_rest(
    store: Store, tmp_path: Path
) -> None:
    env = make_env(store, tmp_path)
    for n in range(60):
        await env.card(f"card-number-{n:02d}", Phase.PLANNED if n % 2 else Phase.DEPLOYED)
    row = await env.one(msg("/status"))
    assert "card-number-00, card-number-02" in row.text and "… (+22)" in row.text
    assert "left out" not in row.text


async def test_card_status_shows_runs_question_review_and_reports(env: Env) -> None:
    card = await env.card(
        "login",
        Phase.NEEDS_HUMAN,
        lane="light",
        runtime="codex",
        model="gpt-5",
        review_decision="reject",
        review_report_path="docs/review/login.md",
        data={"research_report": "docs/research/login.md"},
    )
    await env.ask("login", "OAuth or password?", ["OAuth", "password"])
    async with store_tx(env) as db:
        await telemetry.record(
            db,
            RunRecord(
                role="builder",
                runtime="codex",
                configured_model="gpt-5",
                actual_model="gpt-5",
                reasoning_effort="high",
                input_tokens=1200,
                cached_tokens=0,
                output_tokens=340,
                cost_usd=0.42,
                duration_s=125,
                turns=3,
                outcome="committed",
                session_id=None,
                card_id=card.id,
            ),
        )
    row = await env.one(msg("/status login"))
    text = row.text
    assert "login — Title of login" in text
    assert "needs human" in text and "lane light" in text and "codex gpt-5" in text
    assert "review: reject — report docs/review/login.md" in text
    assert "research report: docs/research/login.md" in text
    assert "open question #1: OAuth or password?" in text and "  2. password" in text
    assert "builder (gpt-5): committed, 2m 05s, 1200 in / 340 out tokens, $0.42" in text
    assert row.card_id == card.id


def store_tx(env: Env):
    return env.store.transaction()


async def test_log_shows_the_history(env: Env) -> None:
    await env.card("login")
    await env.one(msg("/start login"))
    await env.one(msg("/cancel login"))
    row = await env.one(msg("/log login"))
    lines = row.text.split("\n")
    assert lines[0] == "History of login (3 events):"
    assert "- → planned [created by test]" in lines[1]
    assert "planned → operator running [started by xmpp:owner@example.org]" in lines[2]
    assert "operator running → planned [cancelled" in lines[3]


async def test_log_names_moves_in_words_and_counts_in_the_singular(env: Env) -> None:
    # Issue 34: internal codes (review_approved) where a person reads the history.
    await env.card("login", Phase.REVIEWING)
    assert (await env.one(msg("/log login"))).text.startswith("History of login (1 event):")
    async with env.store.transaction() as db:
        await card_store.transition(
            db, "login", Action.REVIEW_APPROVED, actor="system", by=By.SYSTEM, reason="ok"
        )
    text = (await env.one(msg("/log login"))).text
    assert "review_approved" not in text and "[review approved by system] ok" in text


async def test_runs_lists_queued_jobs(env: Env) -> None:
    assert (await env.one(msg("/runs"))).text == "No run is queued or running."
    await env.card("login")
    await env.one(msg("/start login"))
    text = (await env.one(msg("/runs"))).text
    assert "operator login — queued" in text


# --- authority ------------------------------------------------------------------


async def test_stranger_is_told_once_an_hour_and_nothing_changes(env: Env) -> None:
    await env.card("login")
    row = await env.one(msg("/start login", STRANGER))
    assert row.purpose == "refusal" and "may not" in row.text
    assert await env.said(msg("/archive login", STRANGER)) == []
    # /help is the one command a stranger may use: it says how to get in, once an hour.
    [help_row] = await env.said(msg("/help", STRANGER))
    assert help_row.text.startswith("/help [<command>]") and "/start" not in help_row.text
    assert STRANGER.id in help_row.text and "requesters" in help_row.text
    assert await env.said(msg("/help", STRANGER)) == []
    assert await env.phase("login") is Phase.PLANNED and await env.jobs() == []
    env.clock.advance(3601)
    assert len(await env.said(msg("/start login", STRANGER))) == 1
    assert await env.phase("login") is Phase.PLANNED


async def test_unknown_sender_identity_is_a_stranger(env: Env) -> None:
    await env.card("login")
    row = await env.one(msg("/start login", None))
    assert "may not" in row.text
    assert await env.phase("login") is Phase.PLANNED


async def test_display_names_never_grant_authority(env: Env) -> None:
    """Same id on another transport, or a nick that looks like an owner: strangers."""
    from chatbot.transports.base import Identity

    await env.card("login")
    for sender in (Identity("matrix", "owner@example.org"), Identity("xmpp", "@owner:example.org")):
        env.clock.advance(3601)
        await env.said(msg("/start login", sender))
        assert await env.phase("login") is Phase.PLANNED


async def test_xmpp_identity_compares_without_case_or_resource(env: Env) -> None:
    from chatbot.transports.base import Identity

    await env.card("login")
    await env.one(msg("/start login", Identity("xmpp", "Owner@Example.org/phone")))
    assert await env.phase("login") is Phase.OPERATOR_RUNNING


async def test_plain_room_chatter_is_ignored(env: Env) -> None:
    assert await env.said(msg("good morning")) == []
    assert await env.said(msg("good morning", STRANGER)) == []


async def test_requester_may_look_but_not_act(env: Env) -> None:
    await env.card("login")
    # Issue 34: "1 cards".
    assert (await env.one(msg("/status", REQUESTER))).text.startswith("1 card\n")
    row = await env.one(msg("/cancel login", REQUESTER))
    assert row.purpose == "refusal" and "Only an owner" in row.text
    row = await env.one(msg("/accept 1", REQUESTER))
    assert "Only an owner" in row.text
    assert await env.phase("login") is Phase.PLANNED


async def test_a_requester_is_limited_told_once_with_the_wait_then_dropped(env: Env) -> None:
    for _ in range(10):
        assert len(await env.said(msg("/runs", REQUESTER))) == 1
    row = await env.one(msg("/runs", REQUESTER))
    assert row.purpose == "refusal"
    assert row.text == (
        "Too many commands: the next one is taken in 3s. Until then I ignore your commands "
        "without another word."
    )
    assert await env.said(msg("/runs", REQUESTER)) == []
    env.clock.advance(3)  # one token back
    assert len(await env.said(msg("/runs", REQUESTER))) == 1
    again = await env.one(msg("/runs", REQUESTER))
    assert again.text.startswith("Too many")  # told again after a pass


async def test_owners_are_never_limited(env: Env) -> None:
    # Issue 34: after one notice every further owner command was dropped without a word.
    await env.card("login")
    for n in range(200):
        [row] = await env.said(msg("/runs" if n % 2 else "/why login"))
        assert "Too many" not in row.text
    await env.one(msg("/start login"))
    assert await env.phase("login") is Phase.OPERATOR_RUNNING


async def test_rate_limit_is_per_sender(env: Env) -> None:
    other = Identity("xmpp", "req2@example.org")
    env.chat.authority = Authority.of([OWNER], [REQUESTER, other])
    for _ in range(11):
        await env.said(msg("/runs", REQUESTER))
    assert "Too many" not in (await env.one(msg("/runs", other))).text


# --- edits ------------------------------------------------------------------------


async def test_edits_are_never_executed(env: Env) -> None:
    await env.card("login")
    row = await env.one(edit("in-1", "/start login"))
    assert row.purpose == "refusal" and "not executed" in row.text
    assert row.reply_to == "in-1"
    assert await env.phase("login") is Phase.PLANNED
    # Told once an hour; edits of ordinary text and strangers' edits are ignored.
    assert await env.said(edit("in-1", "/start login")) == []
    assert await env.said(edit("in-2", "typo fixed")) == []
    assert await env.said(edit("in-3", "/start login", STRANGER)) == []


# --- the reply is part of the change's transaction -------------------------------


async def test_reply_and_move_commit_together(env: Env) -> None:
    """A listener failing after the move rolls back the move and the reply alike."""
    await env.card("login")

    async def broken(db, change) -> None:
        raise RuntimeError("listener broke")

    env.board.listeners.append(broken)
    rows = await env.said(msg("/start login"))
    assert await env.phase("login") is Phase.PLANNED
    assert await env.jobs() == []
    # Only the "failed inside the bot" notice was written, not a success reply.
    assert [r.purpose for r in rows] == ["refusal"]
    assert "failed inside the bot" in rows[0].text


async def test_service_from_config(env: Env, tmp_path: Path) -> None:
    from chatbot.config import parse_config

    config = parse_config(
        """
[bot]
owners = ["Boss@Example.org"]
requesters = ["@helper:example.org"]
repo = "."
locale = "de"
[console]
[runtimes.codex]
binary = "codex"
[lanes.light]
runtime = "codex"
model = ""
iteration_limit = 5
""",
        tmp_path / "bot.toml",
    )
    chat = ChatIntake.from_config(env.board, config)
    from chatbot.chat.authority import Standing
    from chatbot.transports.base import Identity

    assert chat.locale == "de"
    assert chat.authority.role(Identity("xmpp", "boss@example.org")) is Standing.OWNER
    assert chat.authority.role(Identity("matrix", "@helper:example.org")) is Standing.REQUESTER
    # The console's person is the first owner, on the console transport only.
    assert chat.authority.role(Identity("console", "Boss@Example.org")) is Standing.OWNER


async def test_german_locale(store: Store, tmp_path: Path) -> None:
    env = make_env(store, tmp_path, "de")
    await env.card("login", Phase.DEPLOYED)
    refused = (await env.one(msg("/start login"))).text
    assert refused.startswith("Abgelehnt: login ist in Phase ausgerollt")
    assert "Erlaubt: /inspect, /archive" in refused
    assert (await env.one(msg("/start"))).text == "<slug> fehlt. Aufruf: /start <slug>"
    # The whole list is longer in German than one message: it comes in two, not cut.
    full = [row.text for row in await env.said(msg("/help all"))]
    assert len(full) == 2 and full[0].startswith("Befehle:") and "/web" in "\n".join(full)
    assert not any("weitere Zeilen ausgelassen" in text for text in full)
    assert "Am besten damit anfangen:" in (await env.one(msg("/help"))).text
    assert "Keine Berechtigung" in (await env.one(msg("/start login", STRANGER))).text
    status = (await env.one(msg("/status"))).text
    assert status.startswith("1 Karte\n") and "ausgerollt: 1" in status


async def test_handle_never_raises(env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    async def boom(*_a, **_k):
        raise RuntimeError("database on fire")

    monkeypatch.setattr(env.board.reads, "summary", boom)
    row = await env.one(msg("/status"))
    assert row.purpose == "refusal" and "failed inside the bot" in row.text


async def test_deploy_says_a_deployment_is_queued_not_a_phase_change(env: Env) -> None:
    await env.card("login", Phase.READY_FOR_DEPLOYMENT, commit_hash="abc123def4567")
    row = await env.one(msg("/deploy login"))
    assert row.text == "login: deployment of abc123def456 queued."
    assert "→" not in row.text


@pytest.mark.parametrize(
    "phase, stage, command, after",
    [
        (Phase.NEEDS_HUMAN, "operator", "/retry login", Phase.OPERATOR_RUNNING),
        (Phase.NEEDS_HUMAN, "operator", "/start login", Phase.OPERATOR_RUNNING),
        (Phase.NEEDS_HUMAN, None, "/answer login use OAuth", Phase.OPERATOR_RUNNING),
        (Phase.INSPECTOR_FAILED, "inspector", "/cancel login", Phase.READY_FOR_DEPLOYMENT),
        (Phase.INSPECTOR_QUESTION, None, "/answer login yes", Phase.INSPECTOR_RUNNING),
        (Phase.FIXER_QUESTION, None, "/cancel login", Phase.READY_FOR_DEPLOYMENT),
    ],
)
async def test_ways_forward_from_waiting_and_failed_phases(
    env: Env, phase: Phase, stage: str | None, command: str, after: Phase
) -> None:
    # No open question row anywhere here: the phase alone must be enough.
    await env.card("login", phase, failure_stage=stage, commit_hash="abc123")
    async with env.store.transaction() as db:
        await db.execute(
            "UPDATE cards SET resume_phase = 'ready_for_deployment' WHERE slug = 'login'"
        )
    row = await env.one(msg(command))
    assert await env.phase("login") is after, row.text
    assert row.purpose == "reply"


# --- prefixes (issue 14) -------------------------------------------------------------


async def test_commands_work_with_either_prefix(env: Env) -> None:
    await env.card("login")
    row = await env.one(msg("!start login"))
    assert await env.phase("login") is Phase.OPERATOR_RUNNING, row.text
    status = await env.one(msg("!status login"))
    assert "login" in status.text and status.purpose == "reply"
    usage = await env.one(msg("!start"))
    assert "Usage: /start <slug>" in usage.text  # shown with the first prefix


async def test_texts_show_the_first_configured_prefix(store, tmp_path) -> None:
    from tests.chat.conftest import make_env

    bang = make_env(store, tmp_path, prefixes=("!",))
    await bang.card("login", Phase.DEPLOYED)
    refused = await bang.one(msg("!start login"))
    assert "!inspect" in refused.text and "/inspect" not in refused.text
    help_text = (await bang.one(msg("!help"))).text
    assert "!status" in help_text and "/status" not in help_text
    # "/" is not a prefix of this bot: "/status" is conversation in a room.
    assert await bang.said(msg("/status")) == []


async def test_bare_help_and_status_work_in_a_direct_chat_only(env: Env) -> None:
    assert "Start with these:" in (await env.one(dm("help"))).text
    assert (await env.one(dm("Status"))).text == "The board is empty."
    assert await env.said(msg("help")) == []  # in a room, a word is conversation
