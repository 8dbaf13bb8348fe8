"""The job queue: idempotency, atomic claims, leases, recovery at start."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from chatbot.board import BoardService
from chatbot.domain.phases import Kind, Phase
from chatbot.domain.transitions import Action
from chatbot.store import Store
from chatbot.store import cards as card_store
from chatbot.store import jobs as job_store
from chatbot.store import workers as worker_store
from chatbot.store.jobs import JobState, LeaseLost


async def _card(store: Store, slug: str, phase: Phase = Phase.PLANNED) -> int:
    async with store.transaction() as db:
        return (await card_store.create(db, slug, Kind.INTENT, phase, actor="t")).id


async def test_idempotency_key_returns_the_first_job(store: Store) -> None:
    card_id = await _card(store, "c", Phase.READY_FOR_DEPLOYMENT)
    async with store.transaction() as db:
        first, created = await job_store.enqueue(
            db, kind="deploy", lane="deploy", card_id=card_id, idempotency_key="c:abc"
        )
        assert created
        await job_store.cancel(db, first.id)
        again, created_again = await job_store.enqueue(
            db, kind="deploy", lane="deploy", card_id=card_id, idempotency_key="c:abc"
        )
    # Even after the first finished, the key never deploys twice.
    assert not created_again and again.id == first.id


async def test_claim_is_atomic_across_connections(tmp_path: Path) -> None:
    path = tmp_path / "q.sqlite3"
    stores = [await Store.open(path) for _ in range(4)]
    try:
        async with stores[0].transaction() as db:
            for i in range(10):
                await job_store.enqueue(db, kind="operator", lane="role:operator", payload={"i": i})

        async def claimer(store: Store, name: str) -> list[int]:
            taken = []
            while True:
                async with store.transaction() as db:
                    job = await job_store.claim(db, "role:operator", name, 30)
                if job is None:
                    return taken
                taken.append(job.id)

        results = await asyncio.gather(*(claimer(s, f"w{i}") for i, s in enumerate(stores)))
        claimed = [job_id for taken in results for job_id in taken]
        assert sorted(claimed) == list(range(1, 11))  # each job exactly once
    finally:
        for store in stores:
            await store.close()


async def test_claim_takes_only_its_lane_in_order(store: Store) -> None:
    async with store.transaction() as db:
        await job_store.enqueue(db, kind="builder", lane="heavy")
        light_a, _ = await job_store.enqueue(db, kind="builder", lane="light")
        light_b, _ = await job_store.enqueue(db, kind="builder", lane="light")
        first = await job_store.claim(db, "light", "w", 30)
        second = await job_store.claim(db, "light", "w", 30)
        none = await job_store.claim(db, "light", "w", 30)
    assert (first.id, second.id, none) == (light_a.id, light_b.id, None)
    assert first.state is JobState.RUNNING and first.attempts == 1


async def test_heartbeat_complete_fail_and_lost_lease(store: Store) -> None:
    async with store.transaction() as db:
        a, _ = await job_store.enqueue(db, kind="operator", lane="l")
        b, _ = await job_store.enqueue(db, kind="operator", lane="l")
        claimed = await job_store.claim(db, "l", "me", 1)
        await job_store.heartbeat(db, claimed.id, "me", 60)
        renewed = await job_store.get(db, claimed.id)
        assert renewed.lease_expires_at > time.time() + 50
        with pytest.raises(LeaseLost):
            await job_store.heartbeat(db, claimed.id, "someone-else", 60)
        done = await job_store.complete(db, a.id, "me", result="ok")
        assert done.state is JobState.DONE and done.result == "ok"
        with pytest.raises(LeaseLost):
            await job_store.complete(db, a.id, "me")
        second = await job_store.claim(db, "l", "me", 60)
        failed = await job_store.fail(db, second.id, "me", "model answer broken")
    assert failed.state is JobState.FAILED and failed.error == "model answer broken"
    assert b.id == second.id


async def test_expired_leases_are_recovered_on_start(board: BoardService) -> None:
    store = board.store
    reviewing = await _card(store, "rev", Phase.REVIEWING)
    building = await _card(store, "bld", Phase.BUILDING)
    running_ok = await _card(store, "fresh", Phase.REVIEWING)
    async with store.transaction() as db:
        await job_store.enqueue(db, kind="reviewer", lane="role:reviewer", card_id=reviewing)
        await job_store.enqueue(db, kind="builder", lane="light", card_id=building)
        # Leases that ran out a minute ago.
        await job_store.claim(db, "role:reviewer", "old-process", -60)
        await job_store.claim(db, "light", "old-process", -60)
    # A lease that is still fresh and held by the live process stays untouched.
    async with store.transaction() as db:
        await job_store.enqueue(db, kind="reviewer", lane="role:reviewer", card_id=running_ok)
        kept = await job_store.claim(db, "role:reviewer", "this-process", 60)

    recovered = await board.failures.recover()

    by_kind = {r.job.kind: r for r in recovered}
    assert set(by_kind) == {"reviewer", "builder"}
    assert by_kind["reviewer"].requeued and by_kind["reviewer"].job.state is JobState.QUEUED
    assert not by_kind["builder"].requeued and by_kind["builder"].job.state is JobState.FAILED
    # The builder's card says clearly what happened; the reviewer's card waits for its rerun.
    card = await board.reads.card("bld")
    assert card.phase is Phase.FAILED and card.failure_stage == "builder"
    assert "worker stopped" in card.failure_detail
    assert (await board.reads.card("rev")).phase is Phase.REVIEWING
    assert (await job_store.get(store.reader, kept.id)).state is JobState.RUNNING


async def test_running_jobs_of_a_dead_worker_are_orphans_at_once(board: BoardService) -> None:
    card_id = await _card(board.store, "op", Phase.OPERATOR_RUNNING)
    async with board.store.transaction() as db:
        await job_store.enqueue(db, kind="operator", lane="role:operator", card_id=card_id)
        await job_store.claim(db, "role:operator", "crashed-process", 3600)
    # The crashed worker of this host is found dead (its process is gone): no waiting
    # for its hour-long lease.
    recovered = await board.failures.recover(("crashed-process",))
    assert [r.requeued for r in recovered] == [True]


async def test_a_worker_found_dead_on_this_host_loses_its_jobs(board: BoardService) -> None:
    card_id = await _card(board.store, "op", Phase.OPERATOR_RUNNING)
    async with board.store.transaction() as db:
        await job_store.enqueue(db, kind="operator", lane="role:operator", card_id=card_id)
        await job_store.claim(db, "role:operator", "gone", 3600, host="h1")
    # Registered with a process identity that names no living process.
    async with board.store.transaction() as db:
        await worker_store.beat(
            db, "gone", host="h1", process="999999999:1", lanes=["x"], lease_s=3600
        )
    dead = await board.queue.worker_alive("me", host="h1", process=None, lanes=["x"], lease_s=60)
    assert "gone" in dead
    recovered = await board.failures.recover(dead)
    assert [r.job.host for r in recovered] == ["h1"]
    seen = {w.id: w for w in await board.web.workers_seen(0)}
    assert not seen["gone"].alive and seen["me"].alive


async def test_a_stopped_worker_s_jobs_are_orphans_for_the_others(board: BoardService) -> None:
    card_id = await _card(board.store, "op", Phase.OPERATOR_RUNNING)
    await board.queue.worker_alive("w1", host="elsewhere", process=None, lanes=["l"], lease_s=600)
    async with board.store.transaction() as db:
        await job_store.enqueue(db, kind="operator", lane="role:operator", card_id=card_id)
        await job_store.claim(db, "role:operator", "w1", 600)
    assert await board.failures.recover() == []
    await board.queue.worker_stopped("w1")
    assert [r.requeued for r in await board.failures.recover()] == [True]


async def test_a_lane_s_limit_counts_every_worker_s_jobs(store: Store) -> None:
    async with store.transaction() as db:
        for _ in range(3):
            await job_store.enqueue(db, kind="operator", lane="l")
    async with store.transaction(exclusive=False) as db:
        assert await job_store.claim(db, "l", "host-a", 60, limit=2, host="a")
    async with store.transaction(exclusive=False) as db:
        assert await job_store.claim(db, "l", "host-b", 60, limit=2, host="b")
    async with store.transaction(exclusive=False) as db:
        assert await job_store.claim(db, "l", "host-c", 60, limit=2, host="c") is None


async def test_repeatable_jobs_stop_being_retried_after_three_attempts(store: Store) -> None:
    async with store.transaction() as db:
        job, _ = await job_store.enqueue(db, kind="operator", lane="l")
    for attempt in range(1, 4):
        async with store.transaction() as db:
            claimed = await job_store.claim(db, "l", f"p{attempt}", 60)
            assert claimed.attempts == attempt
            recovered = await job_store.recover(db, dead_owners=(f"p{attempt}",))
        assert recovered[0].requeued is (attempt < 3)


async def test_start_queues_an_operator_job_and_cancel_cancels_it(board: BoardService) -> None:
    await _card(board.store, "c")
    card = await board.act("c", Action.START, actor="owner@example.org")
    job = await job_store.active_for_card(board.store.reader, card.id)
    assert job.kind == "operator" and job.lane == "role:operator"
    await board.act("c", Action.CANCEL, actor="owner@example.org")
    assert await job_store.active_for_card(board.store.reader, card.id) is None
    assert (await job_store.get(board.store.reader, job.id)).state is JobState.CANCELLED


async def test_while_running_only_expired_leases_count_as_orphans(store: Store) -> None:
    async with store.transaction() as db:
        await job_store.enqueue(db, kind="operator", lane="l")
        await job_store.enqueue(db, kind="operator", lane="l")
        expired = await job_store.claim(db, "l", "other", -1)
        alive = await job_store.claim(db, "l", "other", 60)
        recovered = await job_store.recover(db)
    assert [r.job.id for r in recovered] == [expired.id]
    assert (await job_store.get(store.reader, alive.id)).state is JobState.RUNNING


async def test_jobs_left_in_a_former_role_lane_move_to_their_card_s_lane(
    board: BoardService,
) -> None:
    """A fixer queued before the fixer ran in its card's lane sat in `role:fixer`, which
    no worker serves now; at start it goes where the fixer runs today."""
    store = board.store
    running = await _card(store, "running", Phase.FIXER_RUNNING)
    laneless = await _card(store, "no-lane", Phase.FIXER_RUNNING)
    heavy = await _card(store, "heavy-card", Phase.FIXER_RUNNING)
    async with store.transaction() as db:
        await db.execute("UPDATE cards SET lane = 'heavy' WHERE id = ?", (heavy,))
        for card_id in (running, laneless, heavy):
            await job_store.enqueue(db, kind="fixer", lane="role:fixer", card_id=card_id)
    # `running` was taken before the upgrade (recovery queues it again first if need be).
    async with store.transaction() as db:
        assert await job_store.claim(db, "role:fixer", "old-worker", 60) is not None
    assert await board.queue.move_to_card_lanes() == 2
    lanes = {
        row["card_id"]: (row["lane"], row["state"])
        for row in await store.reader.fetchall("SELECT card_id, lane, state FROM jobs")
    }
    assert lanes == {
        laneless: (board.default_lane, "queued"),
        heavy: ("heavy", "queued"),
        running: ("role:fixer", "running"),  # a running job finishes where it is
    }
    assert await board.queue.move_to_card_lanes() == 0
    # The worker of the default lane takes it now.
    async with store.transaction() as db:
        claimed = await job_store.claim(db, board.default_lane, "w", 60)
    assert claimed is not None and claimed.card_id == laneless


async def test_a_job_waiting_for_a_quota_reset_is_claimed_only_after_it(store: Store) -> None:
    card_id = await _card(store, "limited", Phase.BUILDING)
    async with store.transaction() as db:
        job, _ = await job_store.enqueue(db, kind="builder", lane="light", card_id=card_id)
        claimed = await job_store.claim(db, "light", "w1", 60)
        assert claimed is not None and claimed.attempts == 1
        due = time.time() + 3600
        waiting = await job_store.wait(db, job.id, "w1", due, "codex: quota or rate limit")
    # Back in the queue, the attempt not counted, not claimable before its time.
    assert (waiting.state, waiting.attempts, waiting.not_before) == (JobState.QUEUED, 0, due)
    assert await job_store.claimable_lanes(store.reader, {"light": 1}) == set()
    assert await job_store.next_not_before(store.reader, ("light",)) == due
    async with store.transaction() as db:
        assert await job_store.claim(db, "light", "w1", 60) is None
        with pytest.raises(LeaseLost):
            await job_store.wait(db, job.id, "w1", due, "not running any more")
        await db.execute("UPDATE jobs SET not_before = ? WHERE id = ?", (time.time() - 1, job.id))
        again = await job_store.claim(db, "light", "w2", 60)
    assert again is not None and again.id == job.id and again.attempts == 1
