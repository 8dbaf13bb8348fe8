"""A working agent's question on the web board (issue 38): in the owner's inbox with its
options as buttons, on the card's page escaped and with invisible characters shown, and
answered from there (an option, or words) as from chat: via web, the card stays building."""

from __future__ import annotations

from pathlib import Path

import pytest

from chatbot.domain.phases import Kind, Phase
from chatbot.notify.notifier import Destination
from chatbot.store import cards as card_store
from chatbot.store import jobs as job_store
from chatbot.store import questions as question_store
from tests.web.owners import OWNER_ID, OwnerSite, open_owner_site, owner

ROOM = Destination("xmpp", "board@conference.localhost")
TEXT = "Port <b>8080</b> or\u202e 9090?"


@pytest.fixture
async def site(tmp_path: Path):
    opened = await open_owner_site(tmp_path, rooms=[ROOM])
    try:
        yield opened
    finally:
        await opened.close()


async def asking(site: OwnerSite, options: list[str]):
    async with site.store.transaction() as db:
        card = await card_store.create(
            db, "porting", Kind.INTENT, Phase.BUILDING, actor="t", title="Porting"
        )
        await job_store.enqueue(db, kind="builder", lane="light", card_id=card.id)
        job = await job_store.claim(db, "light", "w1", 60, host="h")
    assert job is not None and job.card_id == card.id
    return await site.board.asks.ask(job, card, TEXT, options)


async def page(site: OwnerSite, cookie: str, path: str) -> str:
    status, _, body = await site.request("GET", path, headers=owner(cookie))
    assert status == 200
    return body


async def test_inbox_and_card_page_show_it_escaped_with_its_options(site: OwnerSite) -> None:
    question = await asking(site, ["8080", "9090"])
    cookie = await site.sign_in()
    board = await page(site, cookie, "")
    assert 'href="/card/porting"' in board
    to = f"/card/porting/act?option=2&amp;question={question.id}"
    assert f'formaction="{to}" name="action" value="answer">9090' in board
    card = await page(site, cookie, "card/porting")
    shown = "Port &lt;b&gt;8080&lt;/b&gt; or\\u202e 9090?"
    assert shown in card and "<b>8080</b>" not in card and "\u202e" not in card
    assert '<textarea name="text"' in card  # the free answer's form


async def test_an_option_from_the_page_answers_it_via_web(site: OwnerSite) -> None:
    question = await asking(site, ["8080", "9090"])
    cookie = await site.sign_in()
    answered = await site.act(cookie, "porting", "answer", option="2")
    assert "your answer goes to the builder" in answered
    found = await question_store.get(site.store.reader, question.id)
    assert found is not None
    assert (found.state, found.answer, found.answered_by, found.answered_via) == (
        "answered",
        "9090",
        f"{OWNER_ID} via web",
        "web",
    )
    assert (await site.board.reads.card("porting")).phase is Phase.BUILDING
    rooms = await site.store.reader.fetchall("SELECT text FROM outbox WHERE purpose = 'web'")
    assert [r[0] for r in rooms] == [
        "🌐 owner@localhost via web: ✔️ porting: your answer goes to the builder; it reads it "
        "at its next step. The card stays building."
    ]


async def test_words_from_the_page_answer_it_via_web(site: OwnerSite) -> None:
    question = await asking(site, [])
    cookie = await site.sign_in()
    await site.act(cookie, "porting", "answer", text="8080, it is free")
    found = await question_store.get(site.store.reader, question.id)
    assert found is not None
    assert (found.answer, found.answered_via) == ("8080, it is free", "web")


async def test_the_inbox_button_answers_the_question_it_was_shown_with(site: OwnerSite) -> None:
    first = await asking(site, ["8080", "9090"])
    job = await job_store.get(site.store.reader, first.job_id)
    card = await site.board.reads.card("porting")
    second = await site.board.asks.ask(job, card, "Which host?", ["alpha", "beta"])
    cookie = await site.sign_in()
    board = await page(site, cookie, "")
    button = f'formaction="/card/porting/act?option=2&amp;question={second.id}"'
    assert f'{button} name="action" value="answer">beta' in board
    # As the browser sends it: the option and the question in the button's address.
    status, _, _ = await site.request(
        "POST",
        f"card/porting/act?option=2&question={second.id}",
        headers=owner(cookie),
        data={"csrf": await site.csrf(cookie, "porting"), "action": "answer"},
    )
    assert status == 303
    answered = await question_store.get(site.store.reader, second.id)
    untouched = await question_store.get(site.store.reader, first.id)
    assert answered is not None and untouched is not None
    assert (answered.answer, answered.answered_via) == ("beta", "web")
    assert untouched.state == "open"
