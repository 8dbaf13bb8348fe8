"""Every (phase, action) pair of the table, legal and illegal, through the real store."""

from __future__ import annotations

from pathlib import Path

import pytest

from chatbot.domain.phases import Kind, Phase
from chatbot.domain.transitions import (
    OWNER_ACTIONS,
    RUN_FAILURE,
    TRANSITIONS,
    Action,
    By,
    Stage,
    Target,
    TransitionRefused,
    allowed_actions,
    find,
    resolve,
)
from chatbot.store import Store
from chatbot.store import cards as card_store
from tests.realservers.postgres import Postgres


def test_table_has_one_row_per_phase_action_kind_and_stage() -> None:
    seen = set()
    for row in TRANSITIONS:
        for phase in row.sources:
            for kind in row.kinds:
                key = (row.action, phase, kind, row.stage)
                assert key not in seen, key
                seen.add(key)


def test_every_action_and_every_phase_appears_in_the_table() -> None:
    assert {row.action for row in TRANSITIONS} == set(Action)
    reachable = {row.target for row in TRANSITIONS if isinstance(row.target, Phase)}
    sources = {phase for row in TRANSITIONS for phase in row.sources}
    # Every phase can be left or entered; archived is the only dead end.
    for phase in Phase:
        assert phase in reachable or phase in sources, phase
    assert not any(Phase.ARCHIVED in row.sources for row in TRANSITIONS)


def _source(failure) -> tuple[Phase, Kind]:
    phase = next(p for p, f in RUN_FAILURE.items() if f is failure)
    row = next(r for r in TRANSITIONS if r.action is failure.action)
    return phase, next(iter(row.kinds))


def _expected(action: Action, phase: Phase, kind: Kind, stage: str | None, by: By):
    row = find(action, phase, kind, stage)
    if row is None or row.by is not by:
        return None
    return row.target


@pytest.mark.parametrize("kind", list(Kind))
@pytest.mark.parametrize("phase", list(Phase))
async def test_every_pair_through_sqlite(tmp_path: Path, phase: Phase, kind: Kind) -> None:
    store = await Store.open(tmp_path / "board.sqlite3")
    try:
        await _every_action_from(store, phase, kind)
    finally:
        await store.close()


async def test_every_pair_through_postgresql(postgres: Postgres) -> None:
    """The same on PostgreSQL, every pair in one schema: a schema and its migrations for
    each pair cost 0.25 s, 92 times over (issue 39)."""
    store = await Store.open(
        postgres.url(postgres.fresh_schema()), password_file=postgres.password_file
    )
    try:
        for phase in Phase:
            for kind in Kind:
                await _every_action_from(store, phase, kind)
    finally:
        await store.close()


async def _every_action_from(store: Store, phase: Phase, kind: Kind) -> None:
    """Each action from `phase` either moves to the table's target or is refused, naming it."""
    for index, action in enumerate(Action):
        by = By.OWNER if action in OWNER_ACTIONS else By.SYSTEM
        slug = f"c-{index}"
        async with store.transaction() as db:
            await db.execute("DELETE FROM events")
            await db.execute("DELETE FROM cards")
            await card_store.create(db, slug, kind, phase, actor="test")
        expected = _expected(action, phase, kind, None, by)
        try:
            async with store.transaction() as db:
                card = await card_store.transition(db, slug, action, actor="test", by=by)
        except TransitionRefused as refused:
            assert expected is None, f"{action} from {phase} ({kind}) should be legal"
            message = str(refused)
            assert f"'{slug}'" in message and phase.value in message and action.value in message
            allowed = allowed_actions(phase, kind, None, by)
            for name in allowed:
                assert name.value in message
            if not allowed:
                assert "allowed: nothing" in message
            # Nothing changed: no event, same version.
            fresh = await card_store.get(store.reader, slug)
            assert fresh is not None and fresh.phase is phase and fresh.version == 1
            assert len(await card_store.events(store.reader, fresh.id)) == 1
            continue
        assert expected is not None, f"{action} from {phase} ({kind}) should be refused"
        target = Phase.PLANNED if expected is Target.RESUME else expected
        assert card.phase is target
        history = await card_store.events(store.reader, card.id)
        assert [(e.from_phase, e.to_phase, e.action) for e in history[1:]] == [
            (phase, target, action.value)
        ]


# The stages a failed card can carry: those of the run failures that lead to `failed`,
# and the one earlier versions wrote for failures outside any role.
FAILED_STAGES = sorted(
    {f.stage for f in RUN_FAILURE.values() if find(f.action, *_source(f)).target is Phase.FAILED}
    | {Stage.WORKER}
)


@pytest.mark.parametrize("stage", FAILED_STAGES)
def test_retry_from_failed_repeats_the_failed_stage(stage: Stage) -> None:
    target = resolve("x", Action.RETRY, Phase.FAILED, Kind.INTENT, by=By.OWNER, failure_stage=stage)
    expected = {
        Stage.OPERATOR: Phase.OPERATOR_RUNNING,
        Stage.BUILDER: Phase.BUILDING,
        Stage.REVIEW: Phase.REVIEWING,
        Stage.DEPLOY: Phase.READY_FOR_DEPLOYMENT,
        Stage.SPLIT: Phase.SPLIT_REQUESTED,
        Stage.WORKER: Phase.OPERATOR_RUNNING,
    }[stage]
    assert target is expected


def test_owner_cannot_use_system_actions_nor_system_owner_actions() -> None:
    with pytest.raises(TransitionRefused):
        resolve("x", Action.REVIEW_APPROVED, Phase.REVIEWING, Kind.INTENT, by=By.OWNER)
    with pytest.raises(TransitionRefused):
        resolve("x", Action.START, Phase.PLANNED, Kind.INTENT, by=By.SYSTEM)


async def test_cancel_returns_to_the_stable_phase_the_run_left(store: Store) -> None:
    async with store.transaction() as db:
        await card_store.create(db, "c", Kind.INTENT, Phase.PLANNING_WITH_FEEDBACK, actor="t")
        await card_store.transition(db, "c", Action.START, actor="o", by=By.OWNER)
        await card_store.transition(db, "c", Action.OPERATOR_DIRECT, actor="s", by=By.SYSTEM)
        card = await card_store.transition(db, "c", Action.CANCEL, actor="o", by=By.OWNER)
    assert card.phase is Phase.PLANNING_WITH_FEEDBACK
    assert card.resume_phase is None


async def test_inspection_returns_to_where_it_started(store: Store) -> None:
    async with store.transaction() as db:
        await card_store.create(db, "c", Kind.INTENT, Phase.DEPLOYED, actor="t")
        await card_store.transition(db, "c", Action.INSPECT, actor="o", by=By.OWNER)
        card = await card_store.transition(db, "c", Action.INSPECTOR_DONE, actor="s", by=By.SYSTEM)
    assert card.phase is Phase.DEPLOYED


def test_german_labels_cover_every_phase() -> None:
    assert Phase.NEEDS_HUMAN.label("de") == "operator_klaerung_noetig"
    assert Phase.READY_FOR_DEPLOYMENT.label("en") == "ready for deployment"
    assert len({p.label("de") for p in Phase}) == len(Phase)


A = Action


def test_allow_is_retry_with_more_budget_and_a_budget_stop_lands_where_a_failure_would() -> None:
    retries = {(r.sources, r.target, r.kinds, r.stage) for r in TRANSITIONS if r.action is A.RETRY}
    allows = {(r.sources, r.target, r.kinds, r.stage) for r in TRANSITIONS if r.action is A.ALLOW}
    deploy = {row for row in retries if row[3] is Stage.DEPLOY}
    assert allows == retries - deploy and deploy  # a deploy runs no model: no budget
    for phase, failure in RUN_FAILURE.items():
        stopped = find(A.BUDGET_STOPPED, phase, _kind_of(phase))
        failed = find(failure.action, phase, _kind_of(phase))
        if failure.stage is Stage.DEPLOY:
            assert stopped is None
        else:
            assert stopped is not None and failed is not None
            assert stopped.target == failed.target and stopped.by is By.SYSTEM


def _kind_of(phase: Phase) -> Kind:
    if phase.value.startswith("research"):
        return Kind.RESEARCH
    return Kind.DRAFT if phase is Phase.DRAFT_RUNNING else Kind.INTENT


def test_a_split_is_summed_up_before_it_is_done_and_the_fixer_may_start_from_planned() -> None:
    assert find(A.CHILDREN_DONE, Phase.SPLIT, Kind.INTENT).target is (Phase.SYNTHESIS_RUNNING)
    assert find(A.SYNTHESIS_DONE, Phase.SYNTHESIS_RUNNING, Kind.INTENT).target is (Phase.DONE)
    # A failed synthesis is retried, or dropped: every child succeeded, the card is done.
    for phase in (Phase.SYNTHESIS_RUNNING, Phase.SYNTHESIS_FAILED):
        assert find(A.CANCEL, phase, Kind.INTENT).target is Phase.DONE
    assert find(A.RETRY, Phase.SYNTHESIS_FAILED, Kind.INTENT).target is (Phase.SYNTHESIS_RUNNING)
    assert find(A.FIX, Phase.PLANNED, Kind.INTENT).target is Phase.FIXER_RUNNING
