"""A working agent's questions and proposals in the chat: posted by the notifier (inert,
with option lines), answered by a reply, an option reaction or /answer, refused to a
requester; proposals made by 👍 or /confirm proposal-<n>, dropped by 👎 or /cancel."""

from __future__ import annotations

from pathlib import Path

from chatbot.board.agent_asks import AgentInputRefused, CardContext
from chatbot.domain.phases import Kind, Phase
from chatbot.notify.notifier import Destination, Notifier
from chatbot.store import cards as card_store
from chatbot.store import comments as comment_store
from chatbot.store import jobs as job_store
from chatbot.store import questions as question_store
from chatbot.store.chat import OutboxRow

from .conftest import REQUESTER, ROOM, Env, make_env, msg, react

ROOMS = [Destination("xmpp", ROOM.id, owners=("owner@example.org",))]


async def building(env: Env, slug: str = "login"):
    """A card whose builder runs (its job claimed)."""
    card = await env.card(slug, Phase.BUILDING)
    async with env.store.transaction() as db:
        await job_store.enqueue(db, kind="builder", lane="light", card_id=card.id)
        job = await job_store.claim(db, "light", "w1", 60, host="h")
    assert job is not None and job.card_id == card.id
    return job, card


async def posted(env: Env, message_id: str) -> OutboxRow:
    """The notifier's one new post, delivered as `message_id`."""
    (row,) = await env.new()
    await env.sent(row, message_id)
    return row


async def asked(env: Env, text: str, options: list[str], locale: str = "en"):
    job, card = await building(env)
    question = await env.board.asks.ask(job, card, text, options)
    await env.new()
    await Notifier(env.store, ROOMS, locale, ask_timeout_s=600).agent_asked(card, question)
    return job, card, question, await posted(env, "bot-q")


async def state(env: Env, question_id: int):
    found = await question_store.get(env.store.reader, question_id)
    assert found is not None
    return found


async def test_the_question_is_posted_inert_with_its_options(env: Env) -> None:
    text = "Use @room's **port** /deploy login?\u202e or <b>not</b>"
    _, _, question, row = await asked(env, text, ["8080", "`9090` @all"])
    assert row.question_id == question.id and row.purpose == "question"
    assert row.mentions == ("owner@example.org",)  # the owners' phones ring
    assert "the builder asks while it works" in row.text
    # The agent's words sit in a fence: no markup, no mention, no command, no bidi trick.
    assert "```\nUse @\u200broom's **port** /deploy login?\\u202e or <b>not</b>\n```" in row.text
    assert "1️⃣ `8080`" in row.text and "2️⃣ `` `9090` @\u200ball ``" in row.text
    assert "waits up to 10m 00s" in row.text and "/answer login <text>" in row.text
    assert "<b>not</b>" not in (row.html or "").replace("&lt;b&gt;not&lt;/b&gt;", "")


async def test_a_reply_answers_it_and_the_card_stays_building(env: Env) -> None:
    _, _, question, _ = await asked(env, "Which port?", ["8080", "9090"])
    answer = await env.one(msg("9090, the old one is taken", reply_to="bot-q"))
    assert "your answer goes to the builder" in answer.text and "building" in answer.text
    found = await state(env, question.id)
    assert (found.state, found.answer, found.answered_via) == (
        "answered",
        "9090, the old one is taken",
        "reply",
    )
    assert found.answered_by == "xmpp:owner@example.org"
    assert await env.phase("login") is Phase.BUILDING
    assert [j.kind for j in await env.jobs()] == ["builder"]  # nothing queued
    again = await env.one(msg("8080", reply_to="bot-q"))
    assert "already answered" in again.text


async def test_an_option_reaction_answers_with_the_option(env: Env) -> None:
    _, _, question, _ = await asked(env, "Which port?", ["8080", "9090", "7070"])
    await env.one(react("bot-q", "3️⃣"))
    found = await state(env, question.id)
    assert (found.answer, found.answered_via) == ("7070", "option")
    assert await env.phase("login") is Phase.BUILDING


async def test_answer_command_picks_the_agents_question(env: Env) -> None:
    _, _, question, _ = await asked(env, "Which port?", [])
    row = await env.one(msg("/answer login take 8080"))
    assert "your answer goes to the builder" in row.text
    found = await state(env, question.id)
    assert (found.answer, found.answered_via) == ("take 8080", "command")
    # Nothing waits any more: /answer says so, as for any card.
    assert (
        await env.one(msg("/answer login more"))
    ).text == "login has no open question. /why login says what it waits for."


async def test_a_requester_cannot_answer_it(env: Env) -> None:
    _, _, question, _ = await asked(env, "Which port?", ["8080", "9090"])
    assert "Only an owner" in (await env.one(msg("8080", REQUESTER, reply_to="bot-q"))).text
    assert "Only an owner" in (await env.one(react("bot-q", "1️⃣", REQUESTER))).text
    assert "Only an owner" in (await env.one(msg("/answer login 8080", REQUESTER))).text
    assert (await state(env, question.id)).state == "open"


async def test_status_shows_it_inert(env: Env) -> None:
    await asked(env, "Ping @room?", ["`x` @all"])
    status = (await env.one(msg("/status login"))).text
    assert "```\nPing @\u200broom?\n```" in status and "1. `` `x` @\u200ball ``" in status


async def test_inbox_and_why_show_it(env: Env) -> None:
    await asked(env, "Which port?", ["8080", "9090"])
    inbox = (await env.one(msg("/inbox"))).text
    assert "login" in inbox and "Which port?" in inbox and "/answer login" in inbox
    why = (await env.one(msg("/why login"))).text
    assert "/answer login" in why


async def test_timed_out_and_closed_are_said_in_the_room(env: Env) -> None:
    _, card, question, _ = await asked(env, "Which port?", [])
    expired = await env.board.asks.expire(question.id, "nobody answered within 10m 00s")
    assert expired is not None
    notifier = Notifier(env.store, ROOMS, "en")
    await notifier.agent_ask_timed_out(card, expired, "nobody answered within 10m 00s")
    (row,) = await env.new()
    assert "nobody answered the builder's question in time" in row.text
    assert "decides itself" in row.text
    late = await env.one(msg("8080", reply_to="bot-q"))
    assert "no longer open" in late.text


async def test_german_texts(store, tmp_path: Path) -> None:
    env = make_env(store, tmp_path, locale="de")
    _, _, question, row = await asked(env, "Welcher Port?", ["8080"], locale="de")
    assert "Der builder fragt während der Arbeit" in row.text
    assert "wartet bis zu 10m 00s" in row.text
    answer = await env.one(msg("8080 bitte", reply_to="bot-q"))
    assert "Deine Antwort geht an den builder" in answer.text
    assert (await state(env, question.id)).answer == "8080 bitte"


# --- proposals ---------------------------------------------------------------------


async def proposed(env: Env, title: str, message_id: str):
    job, card = await building(env)
    made = await env.board.asks.propose(job, card, title, "Make the index cache fast.", "cache/")
    await env.new()
    await Notifier(env.store, ROOMS, "en").agent_proposed(card, made)
    row = await posted(env, message_id)
    return job, card, made, row


async def test_a_proposal_makes_nothing_until_a_thumbs_up(env: Env) -> None:
    _, _, made, row = await proposed(env, "Cache the Index!", "bot-p")
    assert row.proposal_id == made.id and made.slug == "cache-the-index"
    assert f"/confirm proposal-{made.id}" in row.text and "Nothing is created" in row.text
    assert await card_store.get(env.store.reader, "cache-the-index") is None
    answer = await env.one(react("bot-p", "👍"))
    assert f"proposal-{made.id} is the planned card cache-the-index" in answer.text
    card = await card_store.get(env.store.reader, "cache-the-index")
    assert card is not None and card.phase is Phase.PLANNED and card.kind is Kind.INTENT
    intent = (env.board.repo / "docs/intent/cache-the-index.md").read_text()
    assert intent.startswith("# Cache the Index!\n\nMake the index cache fast.")
    assert "Proposed by the run of card `login`" in intent
    events = await env.store.reader.fetchall(
        "SELECT action, reason FROM events WHERE card_id = ?", (card.id,)
    )
    assert [tuple(e) for e in events] == [
        (
            "proposal_confirmed",
            "proposed by the run of card login, confirmed by xmpp:owner@example.org",
        )
    ]
    again = await env.one(msg(f"/confirm proposal-{made.id}"))
    assert "was confirmed already" in again.text


async def test_a_refused_proposal_leaves_no_card(env: Env) -> None:
    _, _, made, _ = await proposed(env, "Drop me", "bot-p")
    answer = await env.one(msg(f"/cancel proposal-{made.id}"))
    assert "is dropped; no card was created" in answer.text
    assert await card_store.get(env.store.reader, "drop-me") is None
    assert not (env.board.repo / "docs/intent/drop-me.md").exists()
    other = await env.board.asks.propose(
        *(await building(env, "second")), "Thumbs down", "Nope.", ""
    )
    await env.posted("bot-p2", proposal_id=other.id)
    assert "is dropped" in (await env.one(react("bot-p2", "👎"))).text
    assert await card_store.get(env.store.reader, "thumbs-down") is None


async def test_a_slug_taken_meanwhile_creates_nothing(env: Env) -> None:
    _, _, made, _ = await proposed(env, "Later work", "bot-p")
    await env.card("later-work")  # someone made that card meanwhile
    answer = await env.one(msg(f"/confirm proposal-{made.id}"))
    assert "was not made" in answer.text and "exists already" in answer.text
    assert f"/cancel proposal-{made.id}" in answer.text
    assert (await env.board.asks.proposal(made.id)).state == "pending"
    assert not (env.board.repo / "docs/intent/later-work.md").exists()


async def test_an_unknown_proposal_is_named_as_a_proposal(env: Env) -> None:
    row = await env.one(msg("/confirm proposal-99"))
    assert row.text.startswith("There is no proposal-99: a proposal is named as in its post")
    row = await env.one(msg("/cancel proposal-99"))
    assert row.text.startswith("There is no proposal-99")


async def test_proposals_are_checked_and_counted(env: Env) -> None:
    job, card = await building(env)
    for bad in ("", "x" * 121, "\x1b\x00"):
        try:
            await env.board.asks.propose(job, card, bad, "goal", "")
        except AgentInputRefused as refusal:
            assert "the title" in str(refusal)
        else:
            raise AssertionError(f"title {bad!r} was taken")
    for n in range(3):
        await env.board.asks.propose(job, card, f"Next {n}", "goal", "")
    try:
        await env.board.asks.propose(job, card, "One more", "goal", "")
    except Exception as refusal:  # noqa: BLE001
        assert "3 of your proposals wait" in str(refusal)
    else:
        raise AssertionError("a fourth proposal was taken")
    same = await env.board.asks.propose(
        *(await building(env, "other")), "Next 0", "same title elsewhere", ""
    )
    assert same.slug == "next-0-2"  # a pending proposal holds its name


async def test_card_context(env: Env) -> None:
    job, card = await building(env)
    (env.board.repo / "docs/intent/login.md").write_text("# Login\n\nLet people in.\n")
    async with env.store.transaction() as db:
        data = {"reviews": [{"commit": "abc", "decision": "reject", "report": "No tests."}]}
        await card_store.update(
            db,
            "login",
            data=data,
            acceptance_criteria=["a test logs in"],
            source_path="docs/intent/login.md",
        )
        await comment_store.add(
            db,
            card.id,
            commit_hash="abc",
            path="app.py",
            lines=(3, 4),
            quote="x = 1",
            body="why 1?",
            author="xmpp:owner@example.org",
        )
    context = await env.board.asks.context(card)
    assert isinstance(context, CardContext)
    assert context.intent == "# Login\n\nLet people in.\n" and context.intent_problem == ""
    assert context.acceptance_criteria == ("a test logs in",)
    assert context.reviews == ({"commit": "abc", "decision": "reject", "report": "No tests."},)
    [comment] = context.comments
    assert (comment["file"], comment["lines"], comment["text"]) == ("app.py", [3, 4], "why 1?")


async def test_closed_and_proposed_in_german(store, tmp_path: Path) -> None:
    env = make_env(store, tmp_path, locale="de")
    job, card = await building(env)
    question = await env.board.asks.ask(job, card, "Welcher Port?", [])
    [closed] = await env.board.asks.close_for_job(job, "der Lauf ist zu Ende")
    assert closed.id == question.id
    await env.new()
    notifier = Notifier(env.store, ROOMS, "de")
    await notifier.agent_ask_closed(card, closed, "der Lauf ist zu Ende")
    (row,) = await env.new()
    assert "Die Frage des builder wartet nicht mehr (der Lauf ist zu Ende)" in row.text
    job2, other = await building(env, "zweite")
    made = await env.board.asks.propose(job2, other, "Größer bauen", "Mehr Platz.", "")
    assert made.slug == "groesser-bauen"
    await notifier.agent_proposed(other, made)
    (row,) = await env.new()
    assert f"schlägt eine Folgekarte proposal-{made.id} vor (sie hieße groesser-bauen)" in row.text
    assert f"/cancel proposal-{made.id} verwirft sie" in row.text
    await env.sent(row, "bot-p")
    answer = await env.one(react("bot-p", "👎"))
    assert answer.text == f"🗑️ proposal-{made.id} ist verworfen; keine Karte wurde angelegt."
