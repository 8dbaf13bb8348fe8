"""Workers on several hosts: three `chatbot worker` processes share one PostgreSQL and
one bare git remote (tests/multihost/fleet.py)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from pathlib import Path

from chatbot.domain.phases import Phase
from chatbot.domain.transitions import Action
from chatbot.store import jobs as job_store
from tests.inprocess import in_thread
from tests.multihost.fleet import Fleet, make_remote, scenario, until
from tests.pipeline.harness import git
from tests.realservers.postgres import Postgres

OWNER = "owner@example.org"
HOSTS = ("host-a", "host-b", "host-c")
TEN = [f"card-{letter}" for letter in "abcdefghij"]


async def test_three_workers_build_review_and_deploy_ten_cards_exactly_once(
    tmp_path: Path, postgres: Postgres
) -> None:
    fleet = Fleet(tmp_path, postgres, make_remote(tmp_path, TEN))
    fleet.write_scenario(scenario(TEN))
    store, board = await fleet.board()
    try:
        for host in HOSTS:
            fleet.start(host)
        for slug in TEN:
            await board.act(slug, Action.START, actor=OWNER)

        async def all_deployed() -> bool:
            phases = {(await board.reads.card(slug)).phase for slug in TEN}
            return phases == {Phase.DEPLOYED} or Phase.FAILED in phases

        try:
            await until(store, all_deployed, timeout=240)
        except TimeoutError:
            raise AssertionError(fleet.logs()) from None
        phases = {slug: (await board.reads.card(slug)).phase for slug in TEN}
        assert set(phases.values()) == {Phase.DEPLOYED}, (phases, fleet.logs())

        # Exactly once each: one builder, one reviewer and one deploy job per card, all done.
        jobs = await store.reader.fetchall(
            "SELECT c.slug, j.kind, j.state, j.host, j.attempts FROM jobs j "
            "JOIN cards c ON c.id = j.card_id ORDER BY j.id"
        )
        for slug in TEN:
            kinds = sorted(row["kind"] for row in jobs if row["slug"] == slug)
            assert kinds == ["builder", "deploy", "operator", "reviewer"], (slug, kinds)
        assert {row["state"] for row in jobs} == {"done"}
        assert {row["attempts"] for row in jobs} == {1}
        # The work was shared: more than one host ran jobs.
        assert len({row["host"] for row in jobs}) > 1, [row["host"] for row in jobs]
        deploys = fleet.deploys()
        assert sorted(slug for slug, _ in deploys) == sorted(TEN)

        # The remote's main holds every card's commit, merged once; each card branch
        # was pushed by the worker that built it, and the reviewed commit is that one.
        check = tmp_path / "check"
        git(tmp_path, "clone", "-q", str(fleet.remote), str(check))
        for slug, commit in deploys:
            card = await board.reads.card(slug)
            assert card.commit_hash == commit
            assert git(check, "rev-parse", f"origin/card/{slug}") == commit
            git(check, "merge-base", "--is-ancestor", commit, "origin/main")
            assert (check / "src" / f"{slug}.txt").read_text() == f"{slug}\n"
        merges = git(check, "log", "--merges", "--format=%s", "origin/main").splitlines()
        assert len([m for m in merges if m.startswith("Merge card")]) <= len(TEN)
        # Every worker registered with its host and lanes, and stopped cleanly.
        seen = {worker.host: worker for worker in await board.web.workers_seen(0)}
        assert set(seen) == set(HOSTS)
        assert all("light" in worker.lanes for worker in seen.values())
    finally:
        codes = fleet.stop()
        await store.close()
    assert set(codes.values()) == {0}, (codes, fleet.logs())
    assert not [w for w in await _workers_alive(fleet)], "stopped workers still count as alive"
    # `chatbot check` on any host: the database and the workers it has seen.
    checked = await in_thread("check", "--config", str(fleet.config_for("host-a")), env=fleet.env)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert f"database: {fleet.database} (PostgreSQL, reachable), schema version" in checked.stdout
    for host in HOSTS:
        assert f"worker on {host} (" in checked.stdout
    assert "stopped, lanes deploy, light, role:inspector, role:operator" in checked.stdout
    assert f"repository: git remote file://{fleet.remote}" in checked.stdout
    assert "reachable," in checked.stdout


async def _workers_alive(fleet: Fleet) -> list[str]:
    from chatbot.store import Store
    from chatbot.store import workers as worker_store

    store = await Store.open(fleet.database, password_file=fleet.postgres.password_file)
    try:
        return [w.host for w in await worker_store.seen_since(store.reader, 0) if w.alive]
    finally:
        await store.close()


async def test_a_worker_killed_mid_run_loses_its_job_to_another(
    tmp_path: Path, postgres: Postgres
) -> None:
    slugs = ["card-k"]
    started = tmp_path / "review-started"
    os.mkfifo(started)
    fleet = Fleet(tmp_path, postgres, make_remote(tmp_path, slugs))
    # The first review hangs (as an agent thinking), and says so through the FIFO.
    fleet.write_scenario(
        scenario(slugs, first_review={"touch_file": str(started), "hang": "before_output"})
    )
    store, board = await fleet.board()
    agent_pid = None
    try:
        for host in HOSTS[:2]:
            fleet.start(host)
        await board.act("card-k", Action.START, actor=OWNER)
        # Blocks until the hanging reviewer writes its pid: the run has started.
        line = await asyncio.wait_for(asyncio.to_thread(_read_line, started), 120)
        agent_pid = int(line)
        card = await board.reads.card("card-k")
        job = await job_store.active_for_card(store.reader, card.id)
        assert job is not None and job.kind == "reviewer" and job.host in HOSTS[:2]
        victim = job.host
        fleet.kill(victim)

        async def deployed() -> bool:
            return (await board.reads.card("card-k")).phase in (Phase.DEPLOYED, Phase.FAILED)

        try:
            await until(store, deployed, timeout=120)
        except TimeoutError:
            raise AssertionError(fleet.logs()) from None
        card = await board.reads.card("card-k")
        assert card.phase is Phase.DEPLOYED, (card.failure_detail, fleet.logs())
        reviewed = await job_store.get(store.reader, job.id)
        # The same job, recovered when the lease ran out and finished by the other host.
        assert reviewed.state is job_store.JobState.DONE and reviewed.attempts == 2
        assert reviewed.host != victim and reviewed.host in HOSTS[:2]
        survivor = (tmp_path / f"{reviewed.host}.log").read_text()
        assert f"recovered job {job.id} (reviewer): the worker stopped during attempt 1" in survivor
        assert [slug for slug, _ in fleet.deploys()] == ["card-k"]
    finally:
        fleet.stop()
        await store.close()
        if agent_pid is not None:
            # The dead worker's agent: on another "host" nobody may kill it but us.
            with contextlib.suppress(ProcessLookupError):
                os.killpg(agent_pid, signal.SIGKILL)


def _read_line(fifo: Path) -> str:
    with open(fifo) as handle:
        return handle.readline().strip()
