"""The worker's side of talking to its agents (chatbot/pipeline/talking.py), on a real
store: what people wrote reaches the run's conversation, the agent's approval requests
are asked, answered, refused by policy, capped per run and timed out.

The conversation here is the runners' own `Conversation`; the CLI drivers that speak it
to codex and Claude Code are tested against the real programs in tests/realcli/.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import pytest

from chatbot.board import BoardService, Card, Job
from chatbot.board.run_events import (
    ApprovalFlood,
    ApprovalRequested,
    ApprovalTimedOut,
    RunEvent,
    RunNote,
    SteerRefused,
)
from chatbot.config import Config, parse_config
from chatbot.domain import roles
from chatbot.domain.phases import Kind, Phase
from chatbot.pipeline.talking import LiveTalks
from chatbot.store import Store
from chatbot.store import cards as card_store
from chatbot.store import jobs as job_store
from runners.runtimes import ApprovalAsked, Delivered, Refused, Steer, Taken

CONFIG = """
[bot]
owners = ["owner@example.org"]
# The scripted stand-ins read and write test files outside any worktree: no sandbox.
sandbox = "off"
repo = "repo"
max_open_approvals = 2
approval_timeout_s = 5
{database}[runtimes.codex]
binary = "codex"
[lanes.light]
runtime = "codex"
model = ""
iteration_limit = 10
"""
OWNER = "xmpp:owner@example.org"
E = TypeVar("E", bound=RunEvent)


@dataclass
class Ctx:
    """What LiveTalks needs of a job's context; it records what observers were told."""

    job: Job
    card: Card
    config: Config
    told: list[RunEvent] = field(default_factory=list)

    @property
    def role(self) -> roles.Role:
        return roles.BY_NAME[self.job.kind]

    async def tell(self, event: RunEvent) -> None:
        self.told.append(event)

    def events(self, kind: type[E]) -> list[E]:
        return [event for event in self.told if isinstance(event, kind)]


def _config(database, tmp_path: Path, extra: str = "") -> Config:
    text = CONFIG.format(database=database.toml()) + extra
    return parse_config(text, tmp_path / "bot.toml", secrets=False)


@pytest.fixture
async def board(database, tmp_path: Path):
    """The board on SQLite and on a real PostgreSQL (the `database` fixture)."""
    config = _config(database, tmp_path)
    store = await Store.open(config.bot.database, password_file=config.bot.database_password_file)
    yield BoardService(store, tmp_path)
    await store.close()


@pytest.fixture
def make_ctx(board: BoardService, database, tmp_path: Path):
    async def make(extra: str = "") -> Ctx:
        return await _ctx(board, _config(database, tmp_path, extra))

    return make


async def _ctx(board: BoardService, config: Config) -> Ctx:
    async with board.store.transaction() as db:
        card = await card_store.create(db, "login", Kind.INTENT, Phase.BUILDING, actor="t")
        await job_store.enqueue(db, kind="builder", lane="light", card_id=card.id)
        job = await job_store.claim(db, "light", "w", 60.0)
    assert job is not None
    await board.talk.begins(job)
    return Ctx(job, card, config)


ASK = ApprovalAsked("r1", "command", "curl https://example.org", "/w/login", "to fetch a file")


async def _answered(board: BoardService, talks: LiveTalks, decide, allow: bool, reason=""):
    """The agent asks; an owner answers in chat; the worker's next wake-up delivers it."""
    waiting = asyncio.ensure_future(decide)
    while not (await board.talk.open_approvals("login"))[1]:
        await asyncio.sleep(0)  # the request is being written
    _, [row] = await board.talk.open_approvals("login")
    await board.talk.decide_approval(row.id, allow, actor=OWNER, reason=reason)
    await talks.deliver()
    return await waiting


async def test_an_owners_steer_and_interrupt_reach_the_run_and_its_taking_is_told(
    board: BoardService, make_ctx
) -> None:
    ctx = await make_ctx()
    talks = LiveTalks(board, ctx.config)
    conversation = talks.open(ctx)
    said = await board.talk.steer("login", "use the v2 API", actor=OWNER)
    await talks.deliver()
    sent = await conversation.next()
    assert isinstance(sent, Steer) and sent.text == "use the v2 API"
    assert (await board.talk.approval(said.row.id)).state == "sent"  # type: ignore[union-attr]
    conversation.tell(Taken(sent.key))
    await asyncio.gather(*talks._tasks)
    assert (await board.talk.approval(said.row.id)).state == "taken"  # type: ignore[union-attr]
    notes = [note.key for note in ctx.events(RunNote)]
    assert notes == ["talk_steered", "talk_steer_taken"]
    # Delivered once: a second wake-up hands nothing on again.
    await talks.deliver()
    assert conversation.pending() == []
    await board.talk.interrupt("login", actor=OWNER)
    await talks.deliver()
    assert conversation.pending() != []
    assert talks.close(ctx.job.id) == 1  # the steers it took


async def test_steered_by_is_said_once_the_cli_has_the_steer_and_only_once(
    board: BoardService, make_ctx
) -> None:
    """Handing a steer to the driver is not yet the CLI having it (a pipe, pictures in
    base64): the room hears "steered by" at the driver's Delivered, once, before "took"."""
    ctx = await make_ctx()
    talks = LiveTalks(board, ctx.config)
    conversation = talks.open(ctx)
    await board.talk.steer("login", "use the v2 API", actor=OWNER)
    await talks.deliver()
    sent = await conversation.next()
    await asyncio.gather(*talks._tasks)
    assert ctx.events(RunNote) == []  # on its way only
    conversation.tell(Delivered(sent.key))
    conversation.tell(Delivered(sent.key))  # said twice: told once
    conversation.tell(Taken(sent.key))
    conversation.tell(Delivered(sent.key))  # after it was taken: nothing more
    await asyncio.gather(*talks._tasks)
    notes = [note.key for note in ctx.events(RunNote)]
    assert notes == ["talk_steered", "talk_steer_taken"]


async def test_a_steer_refused_before_the_cli_had_it_never_says_steered_by(
    board: BoardService, make_ctx
) -> None:
    ctx = await make_ctx()
    talks = LiveTalks(board, ctx.config)
    conversation = talks.open(ctx)
    said = await board.talk.steer("login", "use the v2 API", actor=OWNER)
    await talks.deliver()
    sent = await conversation.next()
    conversation.tell(Refused(sent.key, "the run had finished"))
    await asyncio.gather(*talks._tasks)
    assert ctx.events(RunNote) == []
    [refused] = ctx.events(SteerRefused)
    assert refused.why == "the run had finished"
    assert (await board.talk.approval(said.row.id)).state == "refused"  # type: ignore[union-attr]


async def test_an_approval_waits_for_the_owners_answer(board: BoardService, make_ctx):
    ctx = await make_ctx()
    talks = LiveTalks(board, ctx.config)
    conversation = talks.open(ctx)
    allowed = await _answered(board, talks, conversation.decide(ASK), True)
    assert allowed.allow
    [asked] = ctx.events(ApprovalRequested)
    assert (asked.row.text, asked.row.cwd, asked.why) == (
        ASK.command,
        "/w/login",
        "to fetch a file",
    )
    denied = await _answered(board, talks, conversation.decide(ASK), False, "no network")
    assert not denied.allow and denied.reason == f"the owner ({OWNER}) denied this: no network"


async def test_deny_policy_answers_at_once_and_says_so(board: BoardService, make_ctx):
    ctx = await make_ctx('[roles.builder]\napprovals = "deny"\n')
    talks = LiveTalks(board, ctx.config)
    decision = await talks.open(ctx).decide(ASK)
    assert not decision.allow and 'roles.builder.approvals = "deny"' in decision.reason
    assert ctx.events(ApprovalRequested) == []  # nobody was asked
    assert [note.key for note in ctx.events(RunNote)] == ["talk_denied_policy"]
    _, still_open = await board.talk.open_approvals("login")
    assert still_open == []
    [row] = await board.web.talk_of(ctx.card.id)
    assert (row.state, row.actor) == ("denied", "bot")


async def test_a_flood_of_requests_is_capped_and_said_once(board: BoardService, make_ctx):
    ctx = await make_ctx()
    talks = LiveTalks(board, ctx.config)
    conversation = talks.open(ctx)
    for _ in range(2):  # max_open_approvals = 2: these are asked
        assert (await _answered(board, talks, conversation.decide(ASK), True)).allow
    flooded = [await conversation.decide(ASK) for _ in range(3)]
    assert [d.allow for d in flooded] == [False] * 3
    assert "too many approval requests in this run (at most 2)" in flooded[0].reason
    assert len(ctx.events(ApprovalRequested)) == 2
    assert len(ctx.events(ApprovalFlood)) == 1


async def test_an_unanswered_approval_is_denied_and_the_room_told(
    board: BoardService, make_ctx
) -> None:
    ctx = await make_ctx()
    talks = LiveTalks(board, ctx.config)
    decision = await talks.open(ctx).decide(ASK)  # approval_timeout_s = 5: nobody answers
    assert not decision.allow and decision.reason == "nobody answered within 5 seconds"
    [timed_out] = ctx.events(ApprovalTimedOut)
    row = timed_out.row
    assert row.state == "timed_out" and timed_out.card.slug == "login"
    # An answer after the timeout finds the request answered: the first answer stands.
    with pytest.raises(Exception, match="answered already"):
        await board.talk.decide_approval(row.id, True, actor=OWNER)


async def test_a_steer_reaches_the_run_of_its_cards_job_when_card_and_job_ids_differ(
    board: BoardService, database, tmp_path: Path
) -> None:
    """Issue 39: with card 1 running job 1, a steer looked up by card id instead of job id
    still reached the right run. Here card 1 (alpha) runs job 2 and card 2 (login) job 1."""
    config = _config(database, tmp_path)
    async with board.store.transaction() as db:
        alpha = await card_store.create(db, "alpha", Kind.INTENT, Phase.BUILDING, actor="t")
        login = await card_store.create(db, "login", Kind.INTENT, Phase.BUILDING, actor="t")
        for card in (login, alpha):
            await job_store.enqueue(db, kind="builder", lane="light", card_id=card.id)
        claimed = [await job_store.claim(db, "light", "w", 60.0) for _ in range(2)]
    jobs = {job.card_id: job for job in claimed if job is not None}
    assert {card.id: jobs[card.id].id for card in (alpha, login)} == {alpha.id: 2, login.id: 1}
    talks = LiveTalks(board, config)
    conversations = {}
    for card in (alpha, login):
        await board.talk.begins(jobs[card.id])
        conversations[card.slug] = talks.open(Ctx(jobs[card.id], card, config))
    await board.talk.steer("alpha", "alpha: use the v2 API", actor=OWNER)
    await board.talk.steer("login", "login: keep the form", actor=OWNER)
    await talks.deliver()
    for slug in ("alpha", "login"):
        sent = await asyncio.wait_for(conversations[slug].next(), 5)
        assert isinstance(sent, Steer) and sent.text.startswith(f"{slug}:"), (slug, sent)
        assert conversations[slug].pending() == []
