"""The card page's "Why it waits" line: the sentence chat's /why says, in the page's
language, escaped, and new on every reload; and the two catalogues kept alike."""

from __future__ import annotations

import html
import re
import string
import time
from dataclasses import replace

import aiohttp

from chatbot.board import inbox as board_inbox
from chatbot.chat import render_inbox
from chatbot.chat import texts as chat_texts
from chatbot.domain.phases import Phase
from chatbot.domain.transitions import Action
from chatbot.domain.why import Hold, HoldKind, JobSnap, Snapshot, WorkerSnap, hold
from chatbot.web import texts as web_texts
from chatbot.web.texts import Texts
from chatbot.web.why_line import said
from tests.web.boards import HOSTILE_SCRIPT, OWNER, WORKER, claimed
from tests.web.conftest import open_site

WHY = re.compile(r'<p class="why" id="why"><strong>([^<]*)</strong> ([^<]*)</p>')


async def why_on_page(site, slug: str) -> tuple[str, str]:
    """The label and the sentence of the card page's why line, as a reader sees them."""
    async with aiohttp.ClientSession() as session:
        async with session.get(f"{site.url}card/{slug}", headers=site.headers()) as response:
            assert response.status == 200
            body = await response.text()
    found = WHY.search(body)
    assert found is not None, body[:2000]
    return html.unescape(found.group(1)), html.unescape(found.group(2))


async def chat_says(site, slug: str, locale: str = "en") -> str:
    return render_inbox.why(await board_inbox.why(site.board, slug), locale)


async def test_the_card_page_says_what_chat_says(site) -> None:
    # The worker that claimed the seeded jobs is alive.
    await site.board.queue.worker_alive(
        WORKER, host="hostA", process=None, lanes=["light"], lease_s=600
    )
    for slug, sentence in (
        (
            "reviewed",
            "reviewed is approved and waits for you to deploy it. Way on: /deploy reviewed.",
        ),
        ("plain-0", "plain-0 is planned and waits for you to start it. Way on: /start plain-0."),
        ("asks", "asks waits for your answer to its question, open since "),
        ("building", "Nothing holds building: its builder runs on hostA since "),
    ):
        label, shown = await why_on_page(site, slug)
        assert label == "Why it waits:"
        assert shown.startswith(sentence)
        assert shown == await chat_says(site, slug)


async def test_a_card_whose_hold_changes_shows_the_new_sentence_on_reload(site) -> None:
    before = (await why_on_page(site, "plain-1"))[1]
    assert before.endswith("Way on: /start plain-1.")
    await site.board.act("plain-1", Action.START, actor=OWNER)
    after = (await why_on_page(site, "plain-1"))[1]
    assert after != before and "plain-1's operator job" in after
    assert after == await chat_says(site, "plain-1")


async def test_the_why_line_is_escaped(site) -> None:
    # A provider's error text lands in the sentence of a quota wait.
    job = await claimed(site.board, "operator")  # its operator job was queued first
    detail = f"codex: quota or rate limit: {HOSTILE_SCRIPT}"
    await site.board.queue.wait_for_limit(job, WORKER, time.time() + 600, detail)
    async with aiohttp.ClientSession() as session:
        async with session.get(f"{site.url}card/operator", headers=site.headers()) as response:
            body = await response.text()
    assert HOSTILE_SCRIPT not in body
    assert html.escape(HOSTILE_SCRIPT) in WHY.search(body).group(2)
    assert HOSTILE_SCRIPT in (await why_on_page(site, "operator"))[1]


async def test_the_card_page_says_why_in_german(tmp_path) -> None:
    site = await open_site(tmp_path, locale="de", planned=1)
    try:
        label, shown = await why_on_page(site, "reviewed")
        assert label == "Warum sie wartet:"
        assert shown == (
            "reviewed ist freigegeben und wartet darauf, dass du sie deployst. "
            "Weiter mit: /deploy reviewed."
        )
        label, shown = await why_on_page(site, "plain-0")
        assert shown == "plain-0 ist geplant und wartet darauf, dass du sie startest. " + (
            "Weiter mit: /start plain-0."
        )
        assert shown == await chat_says(site, "plain-0", "de")
    finally:
        await site.web.stop()
        await site.store.close()


# --- the two catalogues ----------------------------------------------------------------


def fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def test_chat_and_web_have_every_why_sentence_with_the_same_fields() -> None:
    for locale in ("en", "de"):
        chat = {k: v for k, v in chat_texts.CATALOGUES[locale].items() if k.startswith("why_")}
        web = {k: v for k, v in web_texts.CATALOGUES[locale].items() if k.startswith("why_")}
        assert {f"why_{kind.value}" for kind in HoldKind} <= set(chat), locale
        assert set(web) - {"why_label"} == set(chat), locale
        for key, text in chat.items():
            assert fields(web[key]) == fields(text), (locale, key)


NOW = 1_800_000_000.0


def samples() -> list[Hold]:
    """A hold of every kind (and each wording of the lost lease and the missing worker)."""
    alive = WorkerSnap("w1", "hostA", ("light",), NOW - 5, NOW + 60)
    gone = WorkerSnap("w0", "hostZ", ("light",), NOW - 600, NOW - 300)
    queued = JobSnap(7, "builder", "light", "queued", NOW - 60)
    running = JobSnap(7, "builder", "light", "running", NOW - 60, "w1", NOW + 60, "hostA", NOW - 50)
    lost = JobSnap(7, "reviewer", "light", "running", NOW - 60, "w0", NOW - 300, "hostZ")
    snaps = [
        Snapshot("c", Phase.DEPLOYED, NOW),
        Snapshot("c", Phase.FAILED, NOW, failure_stage="builder", budget_stopped=True),
        Snapshot("c", Phase.INTERRUPTED, NOW, failure_stage="builder"),
        Snapshot("c", Phase.BUILDING, NOW, approval_at=NOW - 30, job=running, workers=(alive,)),
        Snapshot("c", Phase.NEEDS_HUMAN, NOW, question_at=NOW - 30),
        Snapshot("c", Phase.SPLIT_PLAN_WAITING, NOW, question_at=NOW - 30, split_plan=("a", "b")),
        Snapshot("c", Phase.FAILED, NOW, failure_stage="review"),
        Snapshot("c", Phase.SPLIT, NOW, children=(("k", Phase.BUILDING),)),
        Snapshot("c", Phase.PLANNED, NOW, blockers=(("b", Phase.REVIEWING),)),
        Snapshot("c", Phase.REVIEWING, NOW, job=lost, workers=(gone,)),
        Snapshot("c", Phase.REVIEWING, NOW, job=lost, workers=(gone, alive)),
        Snapshot(
            "c", Phase.BUILDING, NOW, job=_unrepeatable(lost, "builder"), workers=(gone, alive)
        ),
        Snapshot("c", Phase.BUILDING, NOW, job=_unrepeatable(lost, "builder"), workers=(gone,)),
        Snapshot("c", Phase.BUILDING, NOW, job=running, workers=(alive,)),
        Snapshot("c", Phase.BUILDING, NOW, job=queued, workers=(alive,), day_budget_spent=True),
        Snapshot(
            "c",
            Phase.BUILDING,
            NOW,
            job=JobSnap(7, "builder", "light", "queued", NOW - 60, not_before=NOW + 600, error="x"),
        ),
        Snapshot("c", Phase.BUILDING, NOW, job=queued),
        Snapshot("c", Phase.BUILDING, NOW, job=queued, workers=(gone,)),
        Snapshot("c", Phase.BUILDING, NOW, job=queued, workers=(alive,), ahead=("a",)),
        Snapshot("c", Phase.BUILDING, NOW, job=queued, workers=(alive,)),
        Snapshot("c", Phase.READY_FOR_DEPLOYMENT, NOW, deploy_pending=True),
        Snapshot("c", Phase.PLANNED, NOW),
        Snapshot("c", Phase.RESEARCH_DONE, NOW),
    ]
    return [hold(s) for s in snaps]


def _unrepeatable(job: JobSnap, kind: str) -> JobSnap:
    return replace(job, kind=kind, requeued_when_lost=False)


def test_the_page_and_chat_say_every_hold_in_the_same_words() -> None:
    held = samples()
    assert {h.kind for h in held} == set(HoldKind)
    for locale in ("en", "de"):
        for h in held:
            found = board_inbox.Why("c", Phase.BUILDING, h)
            assert said(found, Texts(locale)) == render_inbox.why(found, locale), (locale, h)
