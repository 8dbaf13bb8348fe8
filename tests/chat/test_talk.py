"""Talking to a running agent from the chat: /steer, /interrupt, /approve, /deny and the
replies and reactions that mean the same, with every refusal (issue 25).

No worker runs here: a job is claimed by hand and marked as one that talks, as the
worker does when its interactive run starts; tests read the rows the worker would take
(tests/realcli/test_talk_*.py run the real CLIs end to end).
"""

from __future__ import annotations

import pytest

from chatbot.board import TalkRow
from chatbot.domain.phases import Phase
from chatbot.notify.format import inert
from chatbot.notify.notifier import Destination, Notifier
from chatbot.notify.reminders import Reminders
from chatbot.store import jobs as job_store
from chatbot.store import talk as talk_store
from chatbot.store.jobs import Job
from runners.runtimes.talk import MAX_STEER_CHARS
from tests.records import run_record

from .conftest import REQUESTER, ROOM, STRANGER, Env, msg, react


async def _running(env: Env, slug: str, kind: str = "builder", *, talks: bool = True) -> Job:
    """A card whose `kind` job runs now (claimed as a worker would)."""
    phase = {"builder": Phase.BUILDING, "fixer": Phase.FIXER_RUNNING}.get(kind, Phase.REVIEWING)
    card = await env.card(slug, phase)
    async with env.store.transaction() as db:
        await job_store.enqueue(db, kind=kind, lane="light", card_id=card.id)
        job = await job_store.claim(db, "light", "worker-1", 60.0)
        assert job is not None
        await talk_store.set_talks(db, job.id, talks)
    return job


async def _rows(env: Env, kind: str | None = None) -> list[TalkRow]:
    rows = await env.store.reader.fetchall("SELECT * FROM run_talk ORDER BY id")
    found = [TalkRow.from_row(r) for r in rows]
    return [r for r in found if kind is None or r.kind == kind]


async def _asked(env: Env, job: Job, command: str = "git push origin main") -> TalkRow:
    """The agent asks; its message is delivered as 'bot-ask' (what the notifier posts)."""
    card = await env.board.reads.card_by_id(job.card_id)  # type: ignore[arg-type]
    row = await env.board.talk.ask_approval(job, card, tool="command", command=command, cwd="/w")  # type: ignore[arg-type]
    await env.posted("bot-ask", card_id=card.id, talk_id=row.id, purpose="approval")  # type: ignore[union-attr]
    return row


# --- /steer ---------------------------------------------------------------------


async def test_a_steer_reaches_the_running_builder_as_a_row_and_a_line_of_history(
    env: Env,
) -> None:
    job = await _running(env, "login")
    reply = await env.one(msg("/steer login use the v2 API\nand keep the old one"))
    assert "sent to the builder" in reply.text and reply.room == ROOM.id
    [row] = await _rows(env, "steer")
    assert (row.job_id, row.state, row.actor) == (job.id, "open", "xmpp:owner@example.org")
    assert row.text == "use the v2 API\nand keep the old one"
    history = (await env.board.reads.view("login")).events
    assert history[-1].action == "steer"
    assert history[-1].reason == "steered: use the v2 API"


async def test_a_reply_to_the_runs_message_is_a_steer(env: Env) -> None:
    job = await _running(env, "login")
    await env.posted("bot-run", card_id=job.card_id, purpose="run")
    reply = await env.one(msg("stop touching the tests", reply_to="bot-run"))
    assert "sent to the builder" in reply.text
    assert [r.text for r in await _rows(env, "steer")] == ["stop touching the tests"]


async def test_a_steer_with_no_run_says_what_works_and_queues_nothing(env: Env) -> None:
    await env.card("login", Phase.FAILED, failure_stage="builder")
    reply = await env.one(msg("/steer login try again"))
    assert "Nothing was sent: login has no run in progress (failed)" in reply.text
    assert "nothing is queued for later" in reply.text
    assert "/retry" in reply.text and "/fix" in reply.text
    assert await _rows(env) == [] and await env.jobs() == []


async def test_a_steer_to_a_run_that_cannot_talk_names_why_and_the_way_on(env: Env) -> None:
    await _running(env, "login", "reviewer", talks=False)
    reply = await env.one(msg("/steer login look at the tests"))
    assert "the reviewer run of login cannot be talked to" in reply.text
    assert "the reviewer runs one-shot" in reply.text and "/cancel login" in reply.text
    assert await _rows(env) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("/steer login", "<text> is missing"),
        ("/steer", "<slug> is missing"),
        ("/steer Login!! hi", "is not a card slug"),
    ],
)
async def test_a_malformed_steer_gets_its_usage(env: Env, text: str, expected: str) -> None:
    await _running(env, "login")
    reply = await env.one(msg(text))
    assert expected in reply.text and "/steer <slug> <text>" in reply.text
    assert await _rows(env) == []


async def test_a_steer_to_an_unknown_card_suggests_close_slugs(env: Env) -> None:
    await _running(env, "login-page")
    reply = await env.one(msg("/steer login-pag do it"))
    assert "login-page" in reply.text and await _rows(env) == []


async def test_only_owners_steer(env: Env) -> None:
    await _running(env, "login")
    refused = await env.one(msg("/steer login do it", REQUESTER))
    assert "Only an owner may do that; nothing was changed." in refused.text
    await env.said(msg("/steer login do it", STRANGER))
    assert await _rows(env) == []


async def test_a_steer_of_100_kb_is_cut_and_said_so(env: Env) -> None:
    await _running(env, "login")
    reply = await env.one(msg("/steer login " + "x" * 100_000))
    assert f"cut to its first {MAX_STEER_CHARS} characters (you sent 100000)" in reply.text
    [row] = await _rows(env, "steer")
    assert len(row.text) == MAX_STEER_CHARS


# --- /interrupt and going on -----------------------------------------------------------


async def test_interrupt_is_a_row_for_the_worker(env: Env) -> None:
    job = await _running(env, "login")
    reply = await env.one(msg("/interrupt login"))
    assert "interrupting the builder" in reply.text and "/steer login" in reply.text
    [row] = await _rows(env, "interrupt")
    assert row.job_id == job.id and row.state == "open"


async def test_a_steer_after_the_interrupt_continues_the_same_session(env: Env) -> None:
    data = {"interrupted": {"session": "th_123", "runtime": "codex", "role": "builder"}}
    await env.card("login", Phase.INTERRUPTED, failure_stage="builder", data=data)
    reply = await env.one(msg("/steer login use the v2 API"))
    assert "interrupted → building" in reply.text
    [job] = await env.jobs()
    assert job.kind == "builder"
    assert (job.payload["steer"], job.payload["session"]) == ("use the v2 API", "th_123")


async def test_an_interrupted_fixer_goes_on_as_the_fixer(env: Env) -> None:
    data = {"interrupted": {"session": "s-1", "runtime": "claude", "role": "fixer"}}
    await env.card("login", Phase.INTERRUPTED, failure_stage="fixer", data=data)
    await env.one(msg("/steer login only the parser"))
    [job] = await env.jobs()
    assert job.kind == "fixer" and await env.phase("login") is Phase.FIXER_RUNNING


@pytest.mark.parametrize("command", ["/cancel login", "/fix login"])
async def test_the_interrupted_cards_other_ways_work(env: Env, command: str) -> None:
    await env.card("login", Phase.INTERRUPTED, failure_stage="builder")
    await env.store.write_one("UPDATE cards SET resume_phase = 'planned' WHERE slug = 'login'", ())
    await env.said(msg(command))
    assert await env.phase("login") in (Phase.PLANNED, Phase.FIXER_RUNNING)


# --- approvals ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "answer",
    [
        lambda: msg("/approve login"),
        lambda: react("bot-ask", "👍"),
        lambda: msg("yes", reply_to="bot-ask"),
    ],
)
async def test_an_owner_allows_once(env: Env, answer) -> None:
    job = await _running(env, "login")
    asked = await _asked(env, job)
    reply = await env.one(answer())
    assert "allowed once" in reply.text and "git push origin main" in reply.text
    row = await env.board.talk.approval(asked.id)
    assert row is not None and (row.state, row.actor) == ("allowed", "xmpp:owner@example.org")


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        (lambda: msg("/deny login no network please"), "no network please"),
        (lambda: react("bot-ask", "👎"), None),
        (lambda: msg("no network please", reply_to="bot-ask"), "no network please"),
    ],
)
async def test_an_owner_denies_with_a_reason_for_the_agent(env: Env, answer, reason) -> None:
    job = await _running(env, "login")
    asked = await _asked(env, job)
    reply = await env.one(answer())
    assert "denied" in reply.text
    row = await env.board.talk.approval(asked.id)
    assert row is not None and (row.state, row.reason) == ("denied", reason)
    history = (await env.board.reads.view("login")).events
    assert history[-1].action == "approval_denied"


async def _reminded(env: Env, job: Job) -> TalkRow:
    """The agent asks, nobody answers: the reminder goes out as 'bot-remind'."""
    asked = await _asked(env, job)
    where = Destination(ROOM.transport, ROOM.id, owners=("owner@example.org",))
    reminders = Reminders(Notifier(env.store, [where]), remind_after_s=60.0)
    await env.new()
    assert await reminders.remind(asked.created_at + 120) == 1
    [reminder] = await env.new()
    assert reminder.purpose == "reminder" and reminder.talk_id == asked.id
    await env.sent(reminder, "bot-remind")
    return asked


@pytest.mark.parametrize(
    ("answer", "state"),
    [
        (lambda: react("bot-remind", "👍"), "allowed"),
        (lambda: msg("yes", reply_to="bot-remind"), "allowed"),
        (lambda: react("bot-remind", "👎"), "denied"),
        (lambda: msg("not today", reply_to="bot-remind"), "denied"),
    ],
)
async def test_the_reminder_of_an_approval_answers_like_the_request(
    env: Env, answer, state: str
) -> None:
    job = await _running(env, "login")
    asked = await _reminded(env, job)
    reply = await env.one(answer())
    assert ("allowed once" if state == "allowed" else "denied") in reply.text
    row = await env.board.talk.approval(asked.id)
    assert row is not None and (row.state, row.actor) == (state, "xmpp:owner@example.org")


async def test_a_requester_cannot_approve_from_the_reminder(env: Env) -> None:
    job = await _running(env, "login")
    asked = await _reminded(env, job)
    await env.said(react("bot-remind", "👍", REQUESTER))
    row = await env.board.talk.approval(asked.id)
    assert row is not None and row.state == "open"


async def test_the_first_answer_wins(env: Env) -> None:
    job = await _running(env, "login")
    asked = await _asked(env, job)
    await env.one(react("bot-ask", "👍"))
    late = await env.one(react("bot-ask", "👎"))
    assert "answered already (allowed, xmpp:owner@example.org)" in late.text
    row = await env.board.talk.approval(asked.id)
    assert row is not None and row.state == "allowed"
    # A /deny by slug finds nothing open any more: the card's request is answered.
    assert "no approval request open" in (await env.one(msg("/deny login late"))).text


async def test_requesters_cannot_approve(env: Env) -> None:
    job = await _running(env, "login")
    asked = await _asked(env, job)
    await env.said(react("bot-ask", "👍", REQUESTER))
    await env.said(msg("/approve login", REQUESTER))
    await env.said(msg("yes", REQUESTER, reply_to="bot-ask"))
    row = await env.board.talk.approval(asked.id)
    assert row is not None and row.state == "open"


async def test_approve_with_nothing_asked_says_so(env: Env) -> None:
    await _running(env, "login")
    reply = await env.one(msg("/approve login"))
    assert "login has no approval request open. /why login says" in reply.text


async def test_a_restart_closes_what_a_gone_run_asked(env: Env) -> None:
    job = await _running(env, "login")
    asked = await _asked(env, job)
    steer = await env.board.talk.steer("login", "hi", actor="xmpp:owner@example.org")
    # The worker's registration is long gone: its job is recovered, its run was killed.
    recovered = await env.board.failures.recover(dead_owners=("worker-1",))
    assert [item.job.id for item in recovered] == [job.id]
    row = await env.board.talk.approval(asked.id)
    assert row is not None and row.state == "closed"
    assert (await env.board.talk.approval(steer.row.id)).state == "refused"  # type: ignore[union-attr]
    card = await env.board.reads.card("login")
    assert card.phase is Phase.FAILED and "approval request (git push origin main)" in (
        card.failure_detail or ""
    )
    reply = await env.one(msg("/approve login"))
    assert "no approval request open" in reply.text


def test_an_asked_command_is_shown_as_inert_text() -> None:
    shown = inert("echo ```\x1b[31m@room hi\n[link](http://x) <b>x</b>")
    fence = shown.splitlines()[0]
    assert fence == "````" and shown.endswith("\n````")
    assert "\\x1b" in shown and "\x1b" not in shown
    assert "@\u200broom" in shown and "@room" not in shown
    long = inert("y" * 5000)
    assert len(long) < 500 and long.rstrip("`\n").endswith("…")


async def test_status_counts_the_steers_a_run_took(env: Env) -> None:
    job = await _running(env, "login")
    run = run_record(
        configured_model="gpt-5.5",
        input_tokens=10,
        output_tokens=5,
        duration_s=3.0,
        session_id="th_1",
        job_id=job.id,
        card_id=job.card_id,
        steers=2,
    )
    await env.board.queue.record_run(run)
    status = await env.one(msg("/status login"))
    assert "ok, steered 2×" in status.text
