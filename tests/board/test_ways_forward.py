"""No dead ends, derived from the transition table and the text catalogues.

The states a card can reach are explored through the real store from the table
itself (every row tried from every state found so far), so the failure stage and
the phase to return to are those the code really writes. Then:

- every state that waits for the owner (not running, not finished) offers a move
  on besides /archive and /inspect, which the store really performs;
- every command or reaction a posted text suggests is allowed in every state the
  text can be posted for;
- a failure notice suggests exactly the failed card's ways on (domain/ways.py, what
  /status, `chatbot card` and `card --json` name), and each of them is allowed there;
- every way on that /why names (domain/why.py) is allowed in the state it is said for.

A deliberately broken table must fail each check.
"""

from __future__ import annotations

import asyncio
import itertools
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest

from chatbot.chat import texts as chat_texts
from chatbot.chat.commands import BY_NAME, Access
from chatbot.chat.reactions import REACTIONS, Effect
from chatbot.domain import transitions, ways
from chatbot.domain.phases import END_PHASES, QUESTION_PHASES, Kind, Phase
from chatbot.domain.roles import DEPLOY_JOB
from chatbot.domain.transitions import (
    CHECKS_FAILURE,
    RUN_FAILURE,
    TRANSITIONS,
    Action,
    By,
    Target,
    TransitionRefused,
)
from chatbot.domain.ways import ways_forward
from chatbot.domain.why import HoldKind, JobSnap, Snapshot, hold
from chatbot.notify.card_notices import NOTICES, STAGE_NOTICES
from chatbot.notify.notifier import QUESTION_NOTICES
from chatbot.notify.texts import TEXTS as NOTIFY_TEXTS
from chatbot.store import Store
from chatbot.store import cards as card_store


@dataclass(frozen=True)
class State:
    phase: Phase
    kind: Kind
    stage: str | None = None
    resume: Phase | None = None
    resume_stage: str | None = None


STARTS = (
    State(Phase.PLANNED, Kind.INTENT),
    State(Phase.PLANNED, Kind.RESEARCH),
    State(Phase.DRAFT_RUNNING, Kind.DRAFT),
)
# Moves that do not move a card on: looking at it, or closing it.
NOT_FORWARD = frozenset({Action.ARCHIVE, Action.INSPECT})
# A split parent waits for its children, not for the owner: they carry it on.
WAITS_FOR_CHILDREN = frozenset({Phase.SPLIT})


@dataclass
class Graph:
    states: set[State] = field(default_factory=set)
    # (state, action) -> the state the store moved the card to
    moves: dict[tuple[State, Action], State] = field(default_factory=dict)
    # The states a commit that never passed the checks leaves a card in (CHECKS_FAILURE).
    held_by_checks: dict[State, Action] = field(default_factory=dict)

    def reached_by(self, action: Action) -> set[State]:
        moved = {after for (_, done), after in self.moves.items() if done is action}
        return moved | {held for held, done in self.held_by_checks.items() if done is action}

    def forward(self, state: State) -> set[Action]:
        return {
            action
            for (before, action), _ in self.moves.items()
            if before == state and action in transitions.OWNER_ACTIONS and action not in NOT_FORWARD
        }


async def explore(store: Store) -> Graph:
    """Every state reachable from the starts, each move tried through the real store."""
    graph = Graph()
    todo = list(STARTS)
    counter = itertools.count()
    while todo:
        state = todo.pop()
        if state in graph.states:
            continue
        graph.states.add(state)
        for row in transitions.TRANSITIONS:
            if state.phase not in row.sources or state.kind not in row.kinds:
                continue
            after = await _try(store, state, row.action, row.by, f"c{next(counter)}")
            if after is not None:
                graph.moves[(state, row.action)] = after
                todo.append(after)
            checks = CHECKS_FAILURE.get(state.phase)
            if checks is not None and checks.action is row.action:
                # The same move as the checks' gate writes it: failed at stage "checks".
                held = await _try(
                    store, state, row.action, row.by, f"c{next(counter)}", checks.stage.value
                )
                if held is not None:
                    graph.held_by_checks[held] = row.action
                    todo.append(held)
    return graph


async def _try(
    store: Store, state: State, action: Action, by: By, slug: str, stage: str | None = None
) -> State | None:
    changes: dict[str, object] = {}
    failure = RUN_FAILURE.get(state.phase)
    if failure is not None and action in (failure.action, Action.BUDGET_STOPPED):
        # What the board writes when it records a failed run (or one the budget stopped).
        changes = {"failure_stage": stage or failure.stage.value, "failure_detail": "it broke"}
    if action is Action.DRAFT_COMPLETED:
        changes["kind"] = Kind.INTENT.value
    async with store.transaction() as db:
        await card_store.create(db, slug, state.kind, state.phase, actor="test")
        await db.execute(
            "UPDATE cards SET failure_stage = ?, resume_phase = ?, resume_failure_stage = ? "
            "WHERE slug = ?",
            (state.stage, state.resume, state.resume_stage, slug),
        )
        try:
            card = await card_store.transition(db, slug, action, actor="t", by=by, **changes)
        except TransitionRefused:
            return None  # a row for another failure stage
    return State(
        card.phase, card.kind, card.failure_stage, card.resume_phase, card.resume_failure_stage
    )


def dead_ends(graph: Graph) -> list[State]:
    resting = END_PHASES | WAITS_FOR_CHILDREN
    waiting = [s for s in graph.states if not s.phase.is_running and s.phase not in resting]
    return sorted(
        (s for s in waiting if not graph.forward(s)), key=lambda s: (s.phase, s.kind, s.stage or "")
    )


# --- what the texts suggest ------------------------------------------------------

_COMMAND = re.compile(r"/([a-z]+) \{slug\}")
_ACTING_REACTIONS = {r.shown: r.action for r in REACTIONS if r.effect is Effect.ACT}


def suggested(text: str) -> set[Action]:
    """The card actions a text tells the owner to take: `/cmd {slug}` or an acting emoji.

    A notice's leading icon (✂️ on "split into ...") is decoration, not a suggestion.
    """
    found = set()
    head, _, rest = text.partition(" ")
    if head in _ACTING_REACTIONS:
        text = rest
    for name in _COMMAND.findall(text):
        if BY_NAME[name].access is Access.READ:
            continue  # /status, /log, /diff only look: they work in every phase
        if BY_NAME[name].on_run:
            continue  # /steer, /approve, /deny, /interrupt: for a running agent (below)
        if name == "attach":
            continue  # a card takes files in every phase: no move of the table
        action = BY_NAME[name].action
        assert action is not None, f"/{name} {{slug}} suggested, but /{name} acts on no card"
        found.add(action)
    found |= {action for shown, action in _ACTING_REACTIONS.items() if shown in text}
    return found


def catalogue_texts(key: str) -> list[str]:
    return [table[key] for table in NOTIFY_TEXTS.values()]


def posted_for(graph: Graph) -> dict[str, set[State]]:
    """Each notice text and the states it can be posted in, from the notifier's tables."""
    where: dict[str, set[State]] = {}
    staged = {(action, stage) for action, stage in STAGE_NOTICES}
    for action, keys in NOTICES.items():
        reached = {s for s in graph.reached_by(action) if (action, s.stage) not in staged}
        for key in keys:
            where.setdefault(key, set()).update(reached)
    for (action, stage), keys in STAGE_NOTICES.items():
        reached = {s for s in graph.reached_by(action) if s.stage == stage}
        for key in keys:
            where.setdefault(key, set()).update(reached)
    for action, key in QUESTION_NOTICES.items():
        where.setdefault(key, set()).update(graph.reached_by(action))
    asking = {s for s in graph.states if s.phase in QUESTION_PHASES}
    where.setdefault("question", set()).update(asking)
    where.setdefault("question_hint", set()).update(asking)
    # A question unanswered for a while is posted again, in the phase that asks it.
    where.setdefault("reminder_question", set()).update(asking)
    # ...and a split plan, in the phase that waits for its approval.
    where.setdefault("reminder_split_plan", set()).update(
        graph.reached_by(Action.OPERATOR_SPLIT_PLANNED)
    )
    return where


# The card view's own hints (chat catalogue) and where the view shows them.
VIEW_HINTS = {
    "card_split_offer": frozenset({Phase.PLANNING_WITH_FEEDBACK}),
    # /attach's own refusal suggests /attach again: a card takes files in every phase.
    "files_nothing": frozenset(Phase),
    # /diff says how to comment only where the table takes a comment.
    "diff_how_to_comment": frozenset(
        phase for row in TRANSITIONS if row.action is Action.COMMENT for phase in row.sources
    ),
}
# ...and those it shows only right after a move: the states that move leads to.
VIEW_HINTS_AFTER = {
    "card_budget_stop": Action.BUDGET_STOPPED,
    # Said when /interrupt is sent: its suggestions are for the card once it stopped.
    "interrupt_sent": Action.RUN_INTERRUPTED,
}
# Posted while an agent that talks (builder, fixer) runs: approvals and their ends.
RUNNING_TALKER = frozenset({Phase.BUILDING, Phase.FIXER_RUNNING})
TALK_TEXTS = {
    "approval_asked": RUNNING_TALKER,
    "approval_flood": RUNNING_TALKER,
    # An open approval is reminded while its run waits for it.
    "reminder_approval": RUNNING_TALKER,
    # The answer to /steer or /interrupt on a run that cannot hear it: any run.
    "steer_cannot": frozenset(p for p in Phase if p.is_running),
}
# A working agent's question (and its reminder) suggests /answer while its run works:
# chat takes that /answer for the agent's question, outside the table (the card does
# not move; tests/chat/test_agent_questions.py holds it). Nothing else they suggest may
# be outside the table there.
AGENT_QUESTION_TEXTS = {"agent_asked_hint": RUNNING_TALKER, "reminder_agent": RUNNING_TALKER}


def view_texts(key: str) -> list[str]:
    return [catalogue[key] for catalogue in chat_texts.CATALOGUES.values()]


def wrong_suggestions(graph: Graph) -> list[tuple[str, Action, State]]:
    shown = [(key, catalogue_texts(key), states) for key, states in posted_for(graph).items()]
    for key, phases in VIEW_HINTS.items():
        shown.append((key, view_texts(key), {s for s in graph.states if s.phase in phases}))
    for key, after in VIEW_HINTS_AFTER.items():
        texts = view_texts(key) if key in chat_texts.EN else catalogue_texts(key)
        shown.append((key, texts, graph.reached_by(after)))
    for key, phases in (*TALK_TEXTS.items(), *AGENT_QUESTION_TEXTS.items()):
        texts = view_texts(key) if key in chat_texts.EN else catalogue_texts(key)
        shown.append((key, texts, {s for s in graph.states if s.phase in phases}))
    wrong = []
    for key, texts, states in shown:
        for text in texts:
            for action in suggested(text):
                if key in AGENT_QUESTION_TEXTS and action is Action.ANSWER:
                    continue
                for state in states:
                    if transitions.find(action, state.phase, state.kind, state.stage) is None:
                        wrong.append((key, action, state))
    return wrong


# --- a failed card's ways on ------------------------------------------------------

# The notices that report a failure; each names the failed card's ways on.
FAILURE_NOTICES = (
    "failed",
    "draft_failed",
    "research_failed",
    "inspector_failed",
    "fixer_failed",
    "fixer_failed_checks",
    "synthesis_failed",
    "question_operator_failed",
    "budget_stopped",
)


def ways_unlike_notices(graph: Graph) -> list[tuple[str, State, set[Action], set[Action]]]:
    where = posted_for(graph)
    wrong = []
    for key in FAILURE_NOTICES:
        for text in catalogue_texts(key):
            said = suggested(text)
            for state in where[key]:
                listed = set(
                    ways_forward(state.phase, state.stage, budget_stopped=key == "budget_stopped")
                )
                if key.startswith("question"):
                    listed.discard(Action.ANSWER)  # asked for as a reply, not as /answer
                if said != listed:
                    wrong.append((key, state, said, listed))
    return wrong


def unworkable_ways(graph: Graph) -> list[tuple[State, Action]]:
    stopped = graph.reached_by(Action.BUDGET_STOPPED)
    wrong = []
    for state in graph.states:
        named = set(ways_forward(state.phase, state.stage))
        if state in stopped:
            named |= set(ways_forward(state.phase, state.stage, budget_stopped=True))
        for action in named:
            if transitions.find(action, state.phase, state.kind, state.stage) is None:
                wrong.append((state, action))
    return wrong


# --- the tests -------------------------------------------------------------------


async def _explored(folder: Path) -> Graph:
    store = await Store.open(folder / "ways.sqlite3")
    try:
        return await explore(store)
    finally:
        await store.close()


@pytest.fixture(scope="module")
def graph(tmp_path_factory: pytest.TempPathFactory) -> Graph:
    """Explored once for the module (3-4 s under load): the tests only read it."""
    return asyncio.run(_explored(tmp_path_factory.mktemp("ways")))


async def test_every_waiting_state_has_a_way_forward(graph: Graph) -> None:
    # The exploration itself must reach the failure states it is about.
    phases = {s.phase for s in graph.states}
    assert set(Phase) - phases == set(), set(Phase) - phases
    stages = {s.stage for s in graph.states if s.phase is Phase.FAILED}
    assert {"builder", "review", "deploy", "split"} <= stages
    assert State(Phase.NEEDS_HUMAN, Kind.INTENT, "operator") in graph.states
    # A builder's and a fixer's commits that never passed the checks.
    held = {(s.phase, s.stage) for s in graph.held_by_checks}
    assert held == {(Phase.FAILED, "checks"), (Phase.FIXER_FAILED, "checks")}
    assert dead_ends(graph) == []


async def test_every_suggested_command_is_allowed_where_it_is_posted(graph: Graph) -> None:
    where = posted_for(graph)
    # Every text that suggests a card command is accounted for: posted by a move of
    # the table (so its states are known) or shown by the card view.
    suggesting = {
        key for table in NOTIFY_TEXTS.values() for key, text in table.items() if suggested(text)
    } | {
        key
        for catalogue in chat_texts.CATALOGUES.values()
        for key, text in catalogue.items()
        if any(
            BY_NAME[name].access is not Access.READ and not BY_NAME[name].on_run
            for name in _COMMAND.findall(text)
        )
    }
    accounted = {k for k, states in where.items() if states} | set(VIEW_HINTS) | set(TALK_TEXTS)
    accounted |= set(AGENT_QUESTION_TEXTS)
    accounted |= {k for k, action in VIEW_HINTS_AFTER.items() if graph.reached_by(action)}
    unaccounted = suggesting - accounted
    assert unaccounted == set()
    assert wrong_suggestions(graph) == []


def test_run_commands_are_suggested_only_while_an_agent_that_talks_runs() -> None:
    from chatbot.domain.roles import ROLES

    # The phases where /approve, /deny and /interrupt have something to act on...
    talkers = {phase for role in ROLES if role.talks for phase in role.phases}
    assert talkers == RUNNING_TALKER
    # ...and the only texts that suggest them are posted there.
    # (/steer is also a move: after /interrupt it continues the session.)
    on_run = {name for name, command in BY_NAME.items() if command.on_run and not command.action}
    suggesting = {
        key
        for table in [*NOTIFY_TEXTS.values(), *chat_texts.CATALOGUES.values()]
        for key, text in table.items()
        if set(_COMMAND.findall(text)) & on_run
    }
    assert suggesting == {key for key, phases in TALK_TEXTS.items() if phases == RUNNING_TALKER}


async def test_a_deliberate_dead_end_is_found(tmp_path: Path, monkeypatch) -> None:
    # Take away every way out of a failed inspection but archive: the check must say so.
    broken = tuple(
        replace(row, sources=row.sources - {Phase.INSPECTOR_FAILED})
        if row.action in (Action.RETRY, Action.CANCEL, Action.ALLOW)
        else row
        for row in transitions.TRANSITIONS
    )
    monkeypatch.setattr(transitions, "TRANSITIONS", broken)
    store = await Store.open(tmp_path / "broken.sqlite3")
    try:
        graph = await explore(store)
    finally:
        await store.close()
    assert {s.phase for s in dead_ends(graph)} == {Phase.INSPECTOR_FAILED}
    # ...and the failure notice, which still suggests /retry and /cancel, is wrong there,
    # as are the budget's notice and hint for an inspection the budget stopped.
    wrong = {(key, action) for key, action, _ in wrong_suggestions(graph)}
    assert wrong == {
        ("inspector_failed", Action.RETRY),
        ("inspector_failed", Action.CANCEL),
        ("budget_stopped", Action.RETRY),
        ("budget_stopped", Action.ALLOW),
        ("card_budget_stop", Action.ALLOW),
    }


def test_suggestions_are_read_from_the_texts() -> None:
    assert suggested("❌ {slug}: failed. /retry {slug} or /fix {slug}.") == {
        Action.RETRY,
        Action.FIX,
    }
    assert suggested("React ✂️ to split") == {Action.SPLIT}
    assert suggested("/help lists them") == set()


def test_a_resume_target_is_never_taken_without_a_phase_to_return_to(graph: Graph) -> None:
    # A cancelled or finished detour that had nowhere to return would land in `planned`
    # and lose the card's place: every state that can resume knows where to.
    resuming = {
        (state, action)
        for (state, action) in graph.moves
        if (row := transitions.find(action, state.phase, state.kind, state.stage)) is not None
        and row.target is Target.RESUME
    }
    assert resuming
    assert all(state.resume is not None for state, _ in resuming)


async def test_a_failed_card_names_the_ways_on_its_notice_named(graph: Graph) -> None:
    named = {s.phase for s in graph.states if ways_forward(s.phase, s.stage)}
    assert named == set(ways.FAILED_WAYS)  # every phase of the table is reached
    assert ways_unlike_notices(graph) == []
    assert unworkable_ways(graph) == []


async def test_a_repair_held_by_the_checks_names_fix_and_each_way_works(
    graph: Graph, monkeypatch
) -> None:
    held = [s for s in graph.held_by_checks if s.phase is Phase.FIXER_FAILED]
    assert held and all(
        ways_forward(s.phase, s.stage) == (Action.RETRY, Action.FIX, Action.CANCEL) for s in held
    )
    assert all(graph.moves.get((s, a)) for s in held for a in (Action.RETRY, Action.FIX))
    # Without /fix in the table for it, its notice and its ways would name a dead command.
    monkeypatch.setitem(ways.CHECKS_WAYS, Phase.FIXER_FAILED, (Action.RETRY, Action.CANCEL))
    assert {key for key, *_ in ways_unlike_notices(graph)} == {"fixer_failed_checks"}


async def test_a_deliberately_wrong_way_on_is_found(graph: Graph, monkeypatch) -> None:
    monkeypatch.setitem(ways.FAILED_WAYS, Phase.FIXER_FAILED, (Action.RETRY, Action.SPLIT))
    assert {(key, state.phase) for key, state, _, _ in ways_unlike_notices(graph)} == {
        ("fixer_failed", Phase.FIXER_FAILED)
    }
    assert {(state.phase, action) for state, action in unworkable_ways(graph)} == {
        (Phase.FIXER_FAILED, Action.SPLIT)
    }


def test_every_way_on_has_its_words() -> None:
    # render.ways_forward looks up way_<phase>_<action>, else way_<action> (German has
    # the same keys: tests/chat/test_texts_and_render.py).
    groups = [(phase.value, actions) for phase, actions in ways.FAILED_WAYS.items()]
    for group, actions in [*groups, ("budget", ways.BUDGET_WAYS)]:
        for action in actions:
            keys = {f"way_{group}_{action.value}", f"way_{action.value}"}
            assert keys & set(chat_texts.EN), (group, action)


# --- what /why names ----------------------------------------------------------------


def why_snapshots(graph: Graph) -> list[tuple[State, Snapshot]]:
    """Each reachable state with what can hold a card there: a question, its agent's
    approval, its budget's stop, a deploy waiting, its job queued (under a spent day
    budget too) or running on a worker that stopped."""
    now = 1_000_000.0
    stopped = graph.reached_by(Action.BUDGET_STOPPED)
    found = []
    for state in graph.states:
        base = Snapshot("c", state.phase, now, failure_stage=state.stage, kind=state.kind)
        variants = [base]
        if state.phase in QUESTION_PHASES:
            variants.append(replace(base, question_at=now))
        if state in stopped:
            variants.append(replace(base, budget_stopped=True))
        if state.phase is Phase.READY_FOR_DEPLOYMENT:
            variants.append(replace(base, deploy_pending=True))
        if state.phase.is_running or state.phase is Phase.READY_FOR_DEPLOYMENT:
            role = DEPLOY_JOB if state.phase is Phase.READY_FOR_DEPLOYMENT else "builder"
            queued = JobSnap(1, role, "light", "queued", now)
            orphaned = replace(queued, state="running", lease_owner="gone", lease_expires_at=0.0)
            variants += [replace(base, job=queued), replace(base, job=orphaned)]
            variants.append(replace(base, job=queued, day_budget_spent=True))
            if state.phase in RUNNING_TALKER:
                variants.append(replace(base, job=orphaned, approval_at=now))
        found += [(state, snapshot) for snapshot in variants]
    return found


def unworkable_why_ways(graph: Graph) -> list[tuple[State, HoldKind, str]]:
    wrong = []
    for state, snapshot in why_snapshots(graph):
        held = hold(snapshot)
        for way in held.ways:
            name, *rest = way.split()
            command = BY_NAME[name[1:]]
            if command.action is None:
                # /approve, /deny: said only for an approval its running agent waits on.
                fine = held.kind is HoldKind.APPROVAL and state.phase in RUNNING_TALKER
            elif not rest:
                fine = command.name == "allow"  # bare /allow: today's budget, no card
            else:
                fine = transitions.find(command.action, state.phase, state.kind, state.stage)
            if not fine:
                wrong.append((state, held.kind, way))
    return wrong


async def test_every_way_a_why_names_is_allowed_where_it_is_said(graph: Graph) -> None:
    said = {hold(snapshot).kind for _, snapshot in why_snapshots(graph) if hold(snapshot).ways}
    assert {
        HoldKind.BUDGET_CARD,
        HoldKind.INTERRUPTED,
        HoldKind.APPROVAL,
        HoldKind.QUESTION,
        HoldKind.FAILED,
        HoldKind.LEASE_LOST,
        HoldKind.DAY_BUDGET,
        HoldKind.DEPLOY,
        HoldKind.START,
    } <= said
    assert unworkable_why_ways(graph) == []
