"""The owner's choice past the repository's checks on the web board (issue 37 point 2):
a card whose commit did not pass its checks shows "Deploy, skipping the checks" beside
the plain button; the plain one is refused naming that choice (as chat's /deploy is
without --skip-checks), the choice deploys it; a card the checks failed has "Retry,
skipping the checks once". Over plain HTTP, through chat's own handlers."""

from __future__ import annotations

from html import unescape

from chatbot.domain.phases import Kind, Phase
from chatbot.store import cards as card_store
from chatbot.store import jobs as job_store
from tests.web.owners import OWNER_ID, OwnerSite, owner

# The `site` fixture (tests/web/conftest.py) is a board whose owners sign in and act.
OWNERS = True
COMMIT = "c0ffee12" * 5
SKIP_DEPLOY = "Deploy, skipping the checks"
SKIP_RETRY = "Retry, skipping the checks once"


def record(verdict: str, commit: str = COMMIT) -> dict:
    return {
        "commit": commit,
        "command": ["make", "test"],
        "verdict": verdict,
        "duration_s": 3.1,
        "exit_code": 2 if verdict == "failed" else 0,
        "tail": "FAILED test_greet",
    }


async def card(site: OwnerSite, slug: str, phase: Phase, checks: dict, **fields) -> None:
    async with site.store.transaction() as db:
        await card_store.create(
            db,
            slug,
            Kind.INTENT,
            phase,
            actor="t",
            title=slug,
            lane="light",
            commit_hash=COMMIT,
            data={"checks": checks or None},  # {}: a card no checks ran on
            **fields,
        )


async def deploys(site: OwnerSite, slug: str) -> list:
    found = await site.board.reads.card(slug)
    jobs = await job_store.listing(site.store.reader)
    return [j for j in jobs if j.kind == "deploy" and j.card_id == found.id]


async def test_a_deploy_the_checks_hold_is_refused_naming_the_choice_that_deploys_it(
    site: OwnerSite,
) -> None:
    cookie = await site.sign_in()
    await card(site, "held", Phase.READY_FOR_DEPLOYMENT, record("failed"))
    await card(site, "clean", Phase.READY_FOR_DEPLOYMENT, record("passed"))
    page = unescape((await site.request("GET", "card/held", headers=owner(cookie)))[2])
    moves = page[page.index('<div class="moves">') :]
    assert '<button type="submit">Deploy</button>' in moves and SKIP_DEPLOY in moves
    assert 'name="checks" value="--skip-checks"' in moves
    clean = (await site.request("GET", "card/clean", headers=owner(cookie)))[2]
    assert SKIP_DEPLOY not in unescape(clean)  # nothing holds a commit whose checks passed

    # The plain button: refused, naming the choice; nothing queued.
    page = unescape(await site.act(cookie, "held", "deploy"))
    said = page[page.index('<div id="said"') :]
    assert (
        '<p class="refused">Not deployed: the checks of held\'s commit c0ffee12c0ff did not '
        in said
    )
    assert "(failed in 3.1 s (make test))" in said and f"press “{SKIP_DEPLOY}”" in said
    assert await deploys(site, "held") == []
    # The choice: deployed, once, as the owner said.
    page = unescape(await site.act(cookie, "held", "deploy", checks="--skip-checks"))
    assert "held: deployment of c0ffee12c0ff queued" in page
    (job,) = await deploys(site, "held")  # the board queues it only when told to skip
    assert job.payload == {"commit": COMMIT}
    view = await site.board.reads.view("held")
    assert ("deploy", f"{OWNER_ID} via web") in [(e.action, e.actor) for e in view.events]
    # The choice means nothing where nothing holds it: a plain deploy.
    await site.act(cookie, "clean", "deploy")
    assert len(await deploys(site, "clean")) == 1


async def test_a_card_the_checks_failed_can_be_retried_past_them_once(site: OwnerSite) -> None:
    cookie = await site.sign_in()
    await card(
        site,
        "failing",
        Phase.FAILED,
        record("failed"),
        failure_stage="checks",
        failure_detail="checks failed",
    )
    await card(site, "broke", Phase.FAILED, {}, failure_stage="builder", failure_detail="boom")
    page = unescape((await site.request("GET", "card/failing", headers=owner(cookie)))[2])
    assert SKIP_RETRY in page and '<button type="submit">Retry</button>' in page
    broke = unescape((await site.request("GET", "card/broke", headers=owner(cookie)))[2])
    assert SKIP_RETRY not in broke
    await site.act(cookie, "failing", "retry", checks="--skip-checks")
    assert (await site.board.reads.card("failing")).phase is Phase.BUILDING
    jobs = await job_store.listing(site.store.reader)
    (job,) = [j for j in jobs if j.card_id == (await site.board.reads.card("failing")).id]
    assert job.kind == "builder" and job.payload.get("skip_checks") is True


async def test_in_german(tmp_path) -> None:
    from tests.web.owners import open_owner_site

    site = await open_owner_site(tmp_path, locale="de")
    try:
        cookie = await site.sign_in()
        await card(site, "held", Phase.READY_FOR_DEPLOYMENT, record("failed"))
        page = unescape(await site.act(cookie, "held", "deploy"))
        assert "Nicht ausgerollt: Die Prüfungen von Commit c0ffee12c0ff" in page
        assert "„Ausrollen ohne bestandene Prüfungen“" in page
        assert '<button type="submit">Ausrollen ohne bestandene Prüfungen</button>' in page
    finally:
        await site.close()


async def test_the_board_page_offers_the_retry_past_the_checks_on_the_card(
    site: OwnerSite,
) -> None:
    from tests.web.test_inbox_http import owner_page, press

    cookie = await site.sign_in()
    await card(
        site,
        "failing",
        Phase.FAILED,
        record("failed"),
        failure_stage="checks",
        failure_detail="checks failed",
    )
    page = unescape(await owner_page(site, cookie))
    to = "/card/failing/act?checks=--skip-checks"
    button = f'formaction="{to}" name="action" value="retry">{SKIP_RETRY}</button>'
    assert button in page and page.count(SKIP_RETRY) == 1  # only where the checks held it
    status, headers, _ = await press(site, cookie, page, to, "retry")
    assert status == 303 and headers["Location"] == "/"
    failing = await site.board.reads.card("failing")
    assert failing.phase is Phase.BUILDING
    jobs = await job_store.listing(site.store.reader)
    (job,) = [j for j in jobs if j.card_id == failing.id]
    assert job.payload.get("skip_checks") is True
