"""/why in every state, and its way on taken: the card must move on.

Each test drives a card into one hold with the calls the bot itself makes (owner moves,
a worker claiming and applying, its heartbeat, a budget stop, an agent's approval
request), checks the sentence, then takes the way the sentence names through the board
call its chat command uses, and checks what holds the card next. On SQLite and
PostgreSQL.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from chatbot.board import BoardService, split_plan
from chatbot.board import inbox as board_inbox
from chatbot.board.split_plan import NewChild
from chatbot.chat import render_inbox
from chatbot.domain.budgets import Budgets
from chatbot.domain.phases import Kind, Phase
from chatbot.domain.roles import DEPLOY_JOB, ROLES, role_lane
from chatbot.domain.transitions import Action
from chatbot.domain.why import HoldKind
from chatbot.pipeline.budget import hold_for_day_budget, stop_detail
from chatbot.store import Store
from chatbot.store import cards as card_store
from tests.pipeline.test_budget_limits import spend

OWNER = "xmpp:owner@example.org"
LANES = ["light", DEPLOY_JOB, *(role_lane(role.name) for role in ROLES)]
COMMIT = "c0ffee" * 6 + "abcd"


async def planned(board: BoardService, slug: str, kind: Kind = Kind.INTENT, **fields):
    async with board.store.transaction() as db:
        return await card_store.create(
            db, slug, kind, Phase.PLANNED, actor="test", title=slug, lane="light", **fields
        )


async def worker(board: BoardService, name: str = "w1", lease_s: float = 600) -> None:
    """A worker's heartbeat, as `chatbot worker` sends it (every lane)."""
    await board.queue.worker_alive(
        name, host=f"host-{name}", process=None, lanes=LANES, lease_s=lease_s
    )


async def claimed(board: BoardService, slug: str, name: str = "w1"):
    job = (await board.reads.view(slug)).active_job
    assert job is not None, f"{slug} has no job"
    got = await board.queue.claim(job.lane, name, 600, host=f"host-{name}")
    assert got is not None and got.id == job.id
    return got


async def applied(board: BoardService, slug: str, action: Action, **changes):
    """A worker's run of the card ends with this validated result."""
    job = await claimed(board, slug)
    return await board.apply(slug, action, job=job, worker="w1", reason=action.value, **changes)


async def why(board: BoardService, slug: str, now: float | None = None):
    found = await board_inbox.why(board, slug, now)
    return found.hold.kind, render_inbox.why(found, "en"), found.ways


async def approved(board: BoardService, slug: str) -> None:
    """Built and reviewed: waits in ready_for_deployment for /deploy."""
    await planned(board, slug)
    await board.act(slug, Action.START, actor=OWNER)
    await applied(board, slug, Action.OPERATOR_DIRECT, lane="light")
    await applied(board, slug, Action.BUILD_COMMITTED, commit_hash=COMMIT)
    await applied(board, slug, Action.REVIEW_APPROVED, deployment_status="pending")


async def test_why_deploy_and_deploying(board: BoardService) -> None:
    await worker(board)
    await approved(board, "ship")
    kind, text, _ = await why(board, "ship")
    assert kind is HoldKind.DEPLOY
    assert text == "ship is approved and waits for you to deploy it. Way on: /deploy ship."
    await board.act("ship", Action.DEPLOY, actor=OWNER)
    kind, text, _ = await why(board, "ship")
    assert kind is HoldKind.QUEUED
    assert (
        text == "ship's deploy job is queued in lane deploy; a worker takes it at its next round."
    )


async def test_why_queued_then_running_moves_by_itself(board: BoardService) -> None:
    await worker(board)
    await planned(board, "go")
    await board.act("go", Action.START, actor=OWNER)
    kind, text, ways = await why(board, "go")
    assert (kind, ways) == (HoldKind.QUEUED, ())
    assert "go's operator job is queued in lane role:operator" in text
    job = await claimed(board, "go")
    kind, text, ways = await why(board, "go")
    assert (kind, ways) == (HoldKind.RUNNING, ())
    assert text.startswith("Nothing holds go: its operator runs on host-w1 since ")
    await board.apply("go", Action.OPERATOR_DIRECT, job=job, worker="w1", lane="light")
    kind, text, _ = await why(board, "go")
    assert kind is HoldKind.QUEUED and "go's builder job is queued in lane light" in text


async def test_why_done_names_no_way(board: BoardService) -> None:
    await worker(board)
    await approved(board, "ship")
    await board.act("ship", Action.DEPLOY, actor=OWNER)
    await applied(board, "ship", Action.DEPLOY_SUCCEEDED, deployment_status="merged")
    assert await why(board, "ship") == (
        HoldKind.DONE,
        "ship is deployed: nothing holds it, it is finished.",
        (),
    )


@pytest.fixture
def budgeted(store: Store, repo: Path):
    def make(budgets: Budgets) -> BoardService:
        return BoardService(store, repo, budgets=budgets)

    return make


async def test_why_budget_card_and_allow(budgeted) -> None:
    board = budgeted(Budgets(per_card_usd={"light": 0.5}))
    await worker(board)
    card = await planned(board, "costly")
    await board.act("costly", Action.START, actor=OWNER)
    await spend(board, card.id, [0.5])
    job = await claimed(board, "costly")
    # The worker's check before the run starts: the card's budget is spent.
    state = await board.budget.of_card(card)
    assert state is not None and state.reached
    await board.budget.stop(job, "w1", state, stop_detail(state, job.kind))
    kind, text, _ = await why(board, "costly")
    assert kind is HoldKind.BUDGET_CARD
    assert text == (
        "costly is held by its own budget: it is spent, so its step did not start. "
        "Way on: /allow costly, /retry costly."
    )
    await board.act("costly", Action.ALLOW, actor=OWNER)
    kind, _, _ = await why(board, "costly")
    assert kind is HoldKind.QUEUED
    assert not (await board.budget.of_card(await board.reads.card("costly"))).reached


async def test_why_day_budget_then_allow_or_a_new_day(budgeted) -> None:
    board = budgeted(Budgets(per_day_usd=1.0))
    # Alive past tomorrow's noon, so that /why can be asked then too.
    await worker(board, lease_s=3 * 86400)
    await planned(board, "later")
    await board.act("later", Action.START, actor=OWNER)
    await spend(board, None, [1.0])
    lane = role_lane("operator")
    assert await hold_for_day_budget(board, [], {lane}) == {lane}  # the worker claims nothing
    kind, text, ways = await why(board, "later")
    assert kind is HoldKind.DAY_BUDGET
    assert text == "later's operator job waits: today's budget is spent. Way on: /allow."
    assert ways == ("/allow",)
    # A new day has a budget of its own.
    tomorrow = time.mktime(time.strptime(time.strftime("%Y-%m-%d"), "%Y-%m-%d")) + 36 * 3600
    assert (await why(board, "later", tomorrow))[0] is HoldKind.QUEUED
    # Today: /allow (no slug) raises today's budget once more; the worker claims again.
    assert await board.budget.allow_day() is not None
    assert (await why(board, "later"))[0] is HoldKind.QUEUED
    assert await hold_for_day_budget(board, [], {lane}) == set()


async def interrupted(board: BoardService, slug: str) -> None:
    """A builder run the owner interrupted, recorded as the worker records it."""
    await planned(board, slug)
    await board.act(slug, Action.START, actor=OWNER)
    await applied(board, slug, Action.OPERATOR_DIRECT, lane="light")
    session = {"session": "s-1", "runtime": "codex", "role": "builder"}
    card = await applied(board, slug, Action.RUN_INTERRUPTED, data={"interrupted": session})
    assert (card.phase, card.failure_stage) == (Phase.INTERRUPTED, "builder")


@pytest.mark.parametrize(
    "way, then",
    [
        ("steer", (Phase.BUILDING, HoldKind.QUEUED)),
        ("fix", (Phase.FIXER_RUNNING, HoldKind.QUEUED)),
        # Back to where it was before the run: here /start had taken it from planned.
        ("cancel", (Phase.PLANNED, HoldKind.START)),
    ],
)
async def test_why_interrupted_and_each_way_on(board: BoardService, way: str, then) -> None:
    await worker(board)
    await interrupted(board, "paused")
    kind, text, ways = await why(board, "paused")
    assert kind is HoldKind.INTERRUPTED
    assert text == (
        "paused waits for you: its run was interrupted and its session is kept. "
        "Way on: /steer paused <text>, /fix paused, /cancel paused."
    )
    assert any(w.startswith(f"/{way} paused") for w in ways)
    payload = {"steer": "use tabs", "session": "s-1"} if way == "steer" else None
    card = await board.act("paused", Action(way), actor=OWNER, payload=payload)
    assert (card.phase, (await why(board, "paused"))[0]) == then


@pytest.mark.parametrize("allow", [True, False])
async def test_why_approval_and_approve_or_deny(board: BoardService, allow: bool) -> None:
    await worker(board)
    await planned(board, "asking")
    await board.act("asking", Action.START, actor=OWNER)
    await applied(board, "asking", Action.OPERATOR_DIRECT, lane="light")
    job = await claimed(board, "asking")
    card = await board.reads.card("asking")
    await board.talk.ask_approval(
        job, card, tool="Bash", command="curl https://example.org", cwd="/w"
    )
    kind, text, _ = await why(board, "asking")
    assert kind is HoldKind.APPROVAL
    assert text.startswith("asking waits for your approval: its agent asked to run something at")
    assert text.endswith("Way on: /approve asking, /deny asking <reason>.")
    # What /approve and /deny do (chat/talking.py): the oldest open request is answered.
    _, asked = await board.talk.open_approvals("asking")
    await board.talk.decide_approval(asked[0].id, allow, actor=OWNER, reason="" if allow else "no")
    assert (await why(board, "asking"))[0] is HoldKind.RUNNING


async def test_why_question_and_answer(board: BoardService) -> None:
    await worker(board)
    await planned(board, "asked")
    await board.act("asked", Action.START, actor=OWNER)
    await applied(
        board, "asked", Action.OPERATOR_NEEDS_HUMAN, question=("needs_human", "Which?", [])
    )
    kind, text, _ = await why(board, "asked")
    assert kind is HoldKind.QUESTION
    assert text.startswith("asked waits for your answer to its question, open since ")
    assert text.endswith("Way on: /answer asked <text>.")
    await board.answer("asked", "SQLite", actor=OWNER)
    kind, text, _ = await why(board, "asked")
    assert kind is HoldKind.QUEUED and "asked's operator job is queued" in text


@pytest.mark.parametrize(
    "way, then",
    [("retry", Phase.REVIEWING), ("fix", Phase.FIXER_RUNNING)],
)
async def test_why_failed_and_each_way_on(board: BoardService, way: str, then: Phase) -> None:
    await worker(board)
    await planned(board, "broken")
    await board.act("broken", Action.START, actor=OWNER)
    await applied(board, "broken", Action.OPERATOR_DIRECT, lane="light")
    await applied(board, "broken", Action.BUILD_COMMITTED, commit_hash=COMMIT)
    job = await claimed(board, "broken")
    await board.failures.fail(job, "w1", detail="the reviewer crashed")
    kind, text, _ = await why(board, "broken")
    assert kind is HoldKind.FAILED
    assert text == "broken is held by its failed review stage. Way on: /retry broken, /fix broken."
    card = await board.act("broken", Action(way), actor=OWNER)
    assert card.phase is then
    assert (await why(board, "broken"))[0] is HoldKind.QUEUED


async def split(board: BoardService) -> None:
    """An operator's split: `one` starts at once, `two` waits for it."""
    await planned(board, "parent")
    await board.act("parent", Action.START, actor=OWNER)
    fields = {"lane": "light", "data": {"auto_start": True}}
    children = [
        NewChild("one", "One", "docs/intent/one.md", fields=fields),
        NewChild("two", "Two", "docs/intent/two.md", blocked_by=("one",), fields=fields),
    ]
    await applied(board, "parent", Action.OPERATOR_SPLIT, children=children)


async def finish(board: BoardService, slug: str) -> None:
    """A child built and approved (its success, with no deploy command configured)."""
    await applied(board, slug, Action.BUILD_COMMITTED, commit_hash=COMMIT)
    await applied(board, slug, Action.REVIEW_APPROVED, deployment_status="pending")


@pytest.mark.parametrize("way", ["confirm", "answer"])
async def test_why_split_plan_and_confirm_or_send_back(board: BoardService, way: str) -> None:
    """`confirm_splits`: the plan waits; /confirm makes the children, an /answer with a
    reason runs the operator again."""
    await worker(board)
    await planned(board, "parent")
    await board.act("parent", Action.START, actor=OWNER)
    fields = {"lane": "light", "data": {"auto_start": True}}
    plan = [
        (NewChild("one", "One", "docs/intent/one.md", fields=fields), "# One\n"),
        (NewChild("two", "Two", "docs/intent/two.md", ("one",), fields=fields), "# Two\n"),
    ]
    await applied(
        board,
        "parent",
        Action.OPERATOR_SPLIT_PLANNED,
        question=("split_plan", "two parts", []),
        data={"split_plan": split_plan.dump(plan)},
    )
    kind, text, ways = await why(board, "parent")
    assert kind is HoldKind.SPLIT_PLAN
    assert text.startswith("parent waits for your approval of its split plan (2 cards: one, two)")
    assert ways == ("/confirm parent", "/answer parent <reason>")
    if way == "confirm":
        await board.act("parent", Action.CONFIRM, actor=OWNER)
        assert (await why(board, "parent"))[0] is HoldKind.CHILDREN
        assert (await why(board, "one"))[0] is HoldKind.QUEUED
    else:
        await board.answer("parent", "one card is enough", actor=OWNER)
        kind, text, _ = await why(board, "parent")
        assert kind is HoldKind.QUEUED and "parent's operator job is queued" in text


async def test_why_blocked_until_its_blocker_is_done(board: BoardService) -> None:
    await worker(board)
    await split(board)
    kind, text, ways = await why(board, "two")
    assert (kind, ways) == (HoldKind.BLOCKED, ())
    assert text == "two is blocked by one (building); it starts when they are done."
    await finish(board, "one")
    # The way on is the blocker's success: the split starts it by itself.
    assert (await board.reads.card("two")).phase is Phase.BUILDING
    assert (await why(board, "two"))[0] is HoldKind.QUEUED


async def test_why_children_until_they_are_done(board: BoardService) -> None:
    await worker(board)
    await split(board)
    kind, text, ways = await why(board, "parent")
    assert (kind, ways) == (HoldKind.CHILDREN, ())
    assert text == "parent is a split waiting for its children: one (building), two (planned)."
    await finish(board, "one")
    assert "waiting for its children: two (building)." in (await why(board, "parent"))[1]
    await finish(board, "two")
    # Every child succeeded: the parent's synthesis runs.
    kind, text, _ = await why(board, "parent")
    assert (await board.reads.card("parent")).phase is Phase.SYNTHESIS_RUNNING
    assert kind is HoldKind.QUEUED and "parent's synthesis job is queued" in text


async def test_why_lease_lost_and_cancel(board: BoardService) -> None:
    await worker(board)
    await planned(board, "orphan")
    await board.act("orphan", Action.START, actor=OWNER)
    await claimed(board, "orphan")
    await board.queue.worker_stopped("w1")
    kind, text, ways = await why(board, "orphan")
    assert kind is HoldKind.LEASE_LOST
    assert "orphan's operator job #1 belongs to worker w1 on host-w1, which stopped" in text
    assert "no live worker serves lane role:operator to take it over" in text
    assert ways == ("/cancel orphan",)
    card = await board.act("orphan", Action.CANCEL, actor=OWNER)
    assert (card.phase, (await why(board, "orphan"))[0]) == (Phase.PLANNED, HoldKind.START)


async def test_why_lease_lost_is_taken_over_by_a_live_worker(board: BoardService) -> None:
    await worker(board)
    await planned(board, "orphan")
    await board.act("orphan", Action.START, actor=OWNER)
    await claimed(board, "orphan")
    await board.queue.worker_stopped("w1")
    await worker(board, "w2")
    kind, text, _ = await why(board, "orphan")
    assert kind is HoldKind.LEASE_LOST and "a live worker takes it over at its next round" in text
    await board.failures.recover(())  # the live worker's round
    assert (await why(board, "orphan"))[0] is HoldKind.QUEUED
    await claimed(board, "orphan", "w2")
    assert (await why(board, "orphan"))[0] is HoldKind.RUNNING


async def test_why_lease_lost_of_a_deploy_names_no_cancel(board: BoardService) -> None:
    await worker(board)
    await approved(board, "ship")
    await board.act("ship", Action.DEPLOY, actor=OWNER)
    await claimed(board, "ship")
    await board.queue.worker_stopped("w1")
    kind, text, ways = await why(board, "ship")
    # /cancel is refused for an approved card: the sentence must not name it.
    assert (kind, ways) == (HoldKind.LEASE_LOST, ())
    assert "its result is unknown; no live worker is left to mark it failed" in text
    await worker(board, "w2")
    assert "a live worker's next round marks it failed" in (await why(board, "ship"))[1]
    await board.failures.recover(())
    kind, text, _ = await why(board, "ship")
    assert kind is HoldKind.FAILED and text.endswith("Way on: /retry ship, /fix ship.")
    await board.act("ship", Action.RETRY, actor=OWNER)
    assert (await why(board, "ship"))[0] is HoldKind.QUEUED


async def test_why_no_worker_until_one_starts(board: BoardService) -> None:
    await planned(board, "alone")
    await board.act("alone", Action.START, actor=OWNER)
    kind, text, ways = await why(board, "alone")
    assert (kind, ways) == (HoldKind.NO_WORKER, ())
    assert text == (
        "alone's operator job waits: no worker has ever served lane role:operator. "
        "Start one: `chatbot worker`."
    )
    await worker(board)  # what `chatbot worker` does first
    assert (await why(board, "alone"))[0] is HoldKind.QUEUED


async def test_why_lane_behind_other_jobs(board: BoardService) -> None:
    await worker(board)
    for slug in ("first", "second"):
        await planned(board, slug)
        await board.act(slug, Action.START, actor=OWNER)
    kind, text, ways = await why(board, "second")
    assert (kind, ways) == (HoldKind.LANE, ())
    assert "second's operator job waits for a slot in lane role:operator, behind 1 job: first" in (
        text
    )
    # The job ahead ends (here: the operator decided): the slot is free.
    await applied(board, "first", Action.OPERATOR_DIRECT, lane="light")
    assert (await why(board, "second"))[0] is HoldKind.QUEUED


async def test_why_quota_ends_by_itself(board: BoardService) -> None:
    await worker(board, lease_s=3600)
    await planned(board, "limited")
    await board.act("limited", Action.START, actor=OWNER)
    job = await claimed(board, "limited")
    until = time.time() + 600
    await board.queue.wait_for_limit(job, "w1", until, "codex: quota or rate limit: 429")
    kind, text, ways = await why(board, "limited")
    assert (kind, ways) == (HoldKind.QUOTA, ())
    assert "runs again by itself at" in text and text.endswith("(codex: 429).")
    assert (await why(board, "limited", until + 1))[0] is HoldKind.QUEUED


async def test_why_start_an_intent_and_a_research_card(board: BoardService) -> None:
    await worker(board)
    await planned(board, "idea")
    await planned(board, "question", Kind.RESEARCH)
    for slug, action in (("idea", Action.START), ("question", Action.RESEARCH)):
        kind, text, ways = await why(board, slug)
        assert kind is HoldKind.START
        assert text == (
            f"{slug} is planned and waits for you to start it. Way on: /{action.value} {slug}."
        )
        await board.act(slug, action, actor=OWNER)
        assert (await why(board, slug))[0] is HoldKind.QUEUED


async def test_why_idle_names_no_way(board: BoardService) -> None:
    await worker(board)
    await planned(board, "read", Kind.RESEARCH)
    await board.act("read", Action.RESEARCH, actor=OWNER)
    await board.apply("read", Action.RESEARCH_STARTED, reason="run started")
    await applied(board, "read", Action.RESEARCH_DONE)
    assert await why(board, "read") == (
        HoldKind.IDLE,
        "read is research done; nothing holds it.",
        (),
    )


def test_every_hold_kind_is_driven_here() -> None:
    source = Path(__file__).read_text(encoding="utf-8")
    assert {kind for kind in HoldKind if f"HoldKind.{kind.name}" not in source} == set()
