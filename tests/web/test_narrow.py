"""The board on a phone, in headless Chromium: "Waiting for you" comes first, and a card's
page does not scroll sideways."""

from __future__ import annotations

from pathlib import Path

from chatbot.domain.phases import Kind, Phase
from chatbot.store import cards as card_store
from chatbot.store import jobs as job_store
from tests.records import run_record
from tests.web.browser import Browser
from tests.web.conftest import open_site
from tests.web.test_talk_page import LONG, Section

RUNTIMES = {"claude": Section()}


async def test_on_a_phone_waiting_for_you_comes_first(browser: Browser, site) -> None:
    await browser.open(site.login_url())
    tops = (
        "return Array.from(document.querySelectorAll('section.column'),"
        " s => [s.id, s.getBoundingClientRect().top, s.getBoundingClientRect().left]);"
    )
    wide = await browser.js(tops)
    assert wide[0][0] == "group-planned"  # the document's order is kept
    # On a desktop the columns stand side by side, planned leftmost.
    assert min(wide, key=lambda s: (s[1], s[2]))[0] == "group-planned"
    await browser.phone()
    await browser.open(site.url)
    narrow = await browser.js(tops)
    first = min(narrow, key=lambda s: s[1])
    assert first[0] == "group-waiting", narrow
    assert len({left for _, _, left in narrow}) == 1  # one column


# The page's widest parts: what scrolls the document sideways, and each table's rows.
WIDTHS = """
const rows = Array.from(document.querySelectorAll('#runs tr, #history tr'));
return {
  page: document.documentElement.scrollWidth,
  rows: rows.filter(r => r.offsetParent !== null).map(r => getComputedStyle(r).display),
  labels: Array.from(document.querySelectorAll('#runs td'),
    td => getComputedStyle(td, '::before').content).slice(0, 2),
  command: document.querySelector('#session pre').getBoundingClientRect().right,
  wider: Array.from(document.querySelectorAll('#main *'))
    .filter(e => e.getBoundingClientRect().right > 391).map(e => e.tagName + '.' + e.className)
    .slice(0, 5),
};
"""


async def test_a_card_page_on_a_phone_does_not_scroll_sideways(
    browser: Browser, tmp_path: Path
) -> None:
    """Issue 35: the runs and history tables and the hand-over command made a card's page
    scroll sideways on a phone; they are lists there now, and the command wraps."""
    site = await open_site(
        tmp_path, workspaces=tmp_path / "a-long-folder-name-for-workspaces", runtimes=RUNTIMES
    )
    try:
        async with site.store.transaction() as db:
            card = await card_store.create(
                db, "talky", Kind.INTENT, Phase.BUILDING, actor="t", title="Talky", lane="light"
            )
            job, _ = await job_store.enqueue(db, kind="builder", lane="light", card_id=card.id)
        await site.board.talk.ask_approval(job, card, tool="Bash", command=LONG, cwd="/w/talky")
        for model in ("claude-sonnet-4-5-20250929-with-a-long-name", "claude-opus-4-1"):
            await site.board.queue.record_run(
                run_record(
                    runtime="claude",
                    role="builder",
                    configured_model=model,
                    actual_model=model,
                    session_id="3f0c2a9e-1111-4222-8333-944445555666",
                    job_id=job.id,
                    card_id=card.id,
                )
            )
        await browser.open(site.login_url("card/talky"))
        wide = await browser.js(WIDTHS)
        assert set(wide["rows"]) == {"table-row"}  # on a desktop they stay tables
        await browser.phone()
        await browser.open(f"{site.url}card/talky")
        narrow = await browser.js(WIDTHS)
        assert narrow["page"] <= 390, narrow["wider"]
        assert narrow["rows"] and set(narrow["rows"]) == {"block"}  # the header row is gone
        assert narrow["labels"] == ['"when: "', '"role: "']
        assert narrow["command"] <= 390
        assert "--resume 3f0c2a9e" in await browser.text("#session pre")
        assert await browser.console_errors() == []
    finally:
        await site.close()
