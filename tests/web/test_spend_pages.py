"""`/budget` and `/pipeline/<id>`: what chat's /budget and /runs <pipeline> tell, as pages."""

from __future__ import annotations

from dataclasses import replace
from html import unescape
from pathlib import Path

from chatbot.board import BoardService, NewChild, RunRecord
from chatbot.domain.phases import Kind, Phase
from chatbot.domain.transitions import Action
from chatbot.store import Store
from chatbot.store import cards as card_store
from chatbot.store import jobs as job_store
from chatbot.web import WebSettings
from chatbot.web.server import WebBoard
from tests.records import run_record
from tests.web.boards import OWNER, intent, system
from tests.web.owners import OwnerSite
from tests.web.test_http import fetch

# The `site` fixture (tests/web/conftest.py) is a board whose owners sign in and act.
OWNERS = True
TOKEN = "a-reader-token-long-enough"


async def page(site: OwnerSite, path: str) -> tuple[int, str]:
    status, _, body = await site.request("GET", path, headers=site.headers())
    return status, unescape(body)


async def test_the_budget_page_shows_today_days_lanes_and_the_costliest_cards(
    site: OwnerSite,
) -> None:
    report = await site.board.budget.spend_report()
    status, body = await page(site, "budget")
    assert status == 200
    assert f"Today: ${report.today.usd:.2f} ({report.today.runs} runs)" in body
    assert report.today.runs == 2 and "there is no day budget" in body
    assert '<a href="/budget">Budget</a>' in body
    [costly] = [s for s, _ in report.cards if s.name == "reviewed"]
    assert f'<a href="/card/reviewed">reviewed</a></td><td>${costly.usd:.2f}</td>' in body
    for day in report.days:
        assert f"<td>{day.name}</td><td>${day.usd:.2f}</td><td>{day.runs}</td>" in body
    # With the token it is readable; without, 401 as every page.
    status, _, _ = await site.request("GET", "budget")
    assert status == 401


async def test_a_pipeline_page_shows_its_runs_by_id_or_by_a_cards_slug(site: OwnerSite) -> None:
    card = await site.board.reads.card("reviewed")
    for role, cost in (("operator", 0.01), ("builder", 0.5)):
        await site.board.queue.record_run(
            RunRecord(
                role=role,
                runtime="codex",
                configured_model="gpt-5-codex-mini",
                actual_model="gpt-5-codex-mini",
                reasoning_effort="medium",
                input_tokens=10,
                cached_tokens=0,
                output_tokens=1,
                cost_usd=cost,
                duration_s=1.0,
                turns=1,
                outcome="ok",
                session_id=None,
                card_id=card.id,
                pipeline_run_id=card.pipeline_run_id,
            )
        )
    status, body = await page(site, f"pipeline/{card.pipeline_run_id}")
    assert status == 200
    assert f"Pipeline {card.pipeline_run_id}: 2 runs, $0.51" in body
    assert body.count('<a href="/card/reviewed">reviewed</a>') >= 2  # its card, its runs
    assert "operator" in body and "builder" in body
    by_slug = await page(site, "pipeline/reviewed")
    assert by_slug[0] == 200 and f"Pipeline {card.pipeline_run_id}:" in by_slug[1]
    _, card_page = await page(site, "card/reviewed")
    assert f'<a href="/pipeline/{card.pipeline_run_id}">' in card_page
    status, body = await page(site, "pipeline/nothing-here")
    assert status == 404 and "No card or run belongs to pipeline 'nothing-here'." in body


async def test_a_split_pipeline_shows_its_parent_children_and_synthesis(site: OwnerSite) -> None:
    async with site.store.transaction() as db:
        parent = await card_store.create(
            db,
            "big",
            Kind.INTENT,
            Phase.DONE,
            actor="t",
            title="Big",
            pipeline_run_id="split-1",
            data={"synthesis": {"path": "docs/synthesis/big.md", "gaps": ["a", "b"]}},
        )
        for slug, phase in (("big-a", Phase.DEPLOYED), ("big-b", Phase.FAILED)):
            await card_store.create(
                db,
                slug,
                Kind.INTENT,
                phase,
                actor="t",
                title=slug,
                parent_id=parent.id,
                pipeline_run_id="split-1",
            )
    status, body = await page(site, "pipeline/split-1")
    assert status == 200
    assert 'Part of <a href="/card/big">big</a>' in body
    assert '<a href="/card/big-a">big-a</a> · deployed' in body
    assert '<a href="/card/big-b">big-b</a> · failed' in body
    assert "docs/synthesis/big.md, 2 gaps found" in body


async def test_the_budget_page_lists_roles_apart_from_the_lanes(site: OwnerSite) -> None:
    # Issue 34: /budget listed "role:operator" as if it were a configured lane.
    card = await site.board.reads.card("reviewed")
    async with site.store.transaction() as db:
        job, _ = await job_store.enqueue(db, kind="operator", lane="role:operator")
    await site.board.queue.record_run(
        run_record(role="operator", cost_usd=0.25, job_id=job.id, card_id=card.id)
    )
    _, body = await page(site, "budget")
    assert "role:operator" not in body
    roles = body[body.index('<section id="per-role">') :]
    assert roles.startswith(
        '<section id="per-role"><h2>Per role with a lane of its own, last 7 days'
    )
    assert "<td>operator</td><td>$0.25</td><td>1</td>" in roles
    lanes = body[body.index('<section id="per-lane">') : body.index('<section id="per-role">')]
    assert "operator" not in lanes


async def test_a_pipeline_keeps_the_split_children_an_owner_starts(tmp_path: Path) -> None:
    """Issue 35: a split child an owner started got a pipeline of its own and left its
    parent's page; it stays in the parent's, with its runs, here and in /runs <pipeline>."""
    repo = tmp_path / "repo"
    intent(repo, "big", "Big")
    store = await Store.open(tmp_path / "board.sqlite3")
    board = BoardService(store, repo)
    site = WebBoard(board, WebSettings("127.0.0.1", 0, TOKEN, "en"))
    await site.start()
    try:
        await board.import_cards()
        await board.act("big", Action.START, actor=OWNER)
        kids = [NewChild(slug, slug, f"docs/intent/{slug}.md") for slug in ("big-a", "big-b")]
        await system(board, "big", Action.OPERATOR_SPLIT, children=kids)
        pipeline = (await board.reads.card("big")).pipeline_run_id
        assert pipeline
        # The owner starts a child the split did not: before, a pipeline of its own.
        await board.act("big-b", Action.START, actor=OWNER)
        started = await board.reads.card("big-b")
        assert started.phase is Phase.OPERATOR_RUNNING and started.pipeline_run_id == pipeline
        run = run_record(role="operator", cost_usd=0.25, card_id=started.id)
        await board.queue.record_run(replace(run, pipeline_run_id=started.pipeline_run_id))
        status, body = await read(site, f"pipeline/{pipeline}")
        assert status == 200 and f"Pipeline {pipeline}: 1 run, $0.25" in body
        assert 'Part of <a href="/card/big">big</a>' in body
        kids_html = body[body.index('<section id="children">') : body.index("</section>")]
        assert '<a href="/card/big-a">big-a</a> · planned' in kids_html
        assert '<a href="/card/big-b">big-b</a> · operator running' in kids_html
        runs = body[body.index('<section id="runs">') :]
        assert '<a href="/card/big-b">big-b</a></td><td data-label="role">operator</td>' in runs
        # Chat's /runs reads the same: by the id, by the parent's slug, by the child's.
        for wanted in (pipeline, "big", "big-b"):
            found, listed = await board.reads.pipeline_runs(wanted)
            assert found == pipeline and [slug for slug, _ in listed] == ["big-b"], wanted
        _, child_page = await read(site, "card/big-b")
        assert f'<a href="/pipeline/{pipeline}">' in child_page
    finally:
        await site.stop()
        await store.close()


async def read(site: WebBoard, path: str) -> tuple[int, str]:
    status, _, body = await fetch(site, path, headers={"Authorization": f"Bearer {TOKEN}"})
    return status, unescape(body)
