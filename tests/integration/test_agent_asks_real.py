"""A working agent asks the owner (issue 38, Must show), end to end: the real bot process
over the real Prosody, the owner's real XMPP client, the REAL codex, Claude Code and
Gemini CLI as the builder, each pointed at a scripted loopback provider in this process
(tests/integration/talk_bot.py). The builder calls `ask_owner` with three options; the
owner answers with a reaction, or from the web board, or nobody answers in time; the
provider's next request holds the answer (or the timeout's words) as the tool's result,
and the run goes on: the card is built and reviewed. A proposal makes nothing until it is
confirmed."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from chatbot.board import BoardService
from chatbot.pipeline.run_tools import NO_ANSWER
from chatbot.store import Store
from tests.integration.e2e import Room, stanza_id
from tests.integration.talk_bot import committed, finish, start
from tests.realcli.clis import CLIS
from tests.realcli.providers import Call, Seen, WriteFile

SLUG = "indent"
QUESTION = "Which port should the service listen on?"
OPTIONS = ["80", "8080", "9090"]
ASK = Call("ask_owner", {"question": QUESTION, "options": OPTIONS})
CSRF = re.compile(r'name="csrf" value="([^"]+)"')


@pytest.fixture
def begin(tmp_path: Path, servers, xmpp_peer, cli_bins, models):
    return lambda cli, **options: start(
        tmp_path, servers.info, cli, cli_bins, models, xmpp_peer, **options
    )


def after_the_answer(results: list[str]):
    """The builder's turn after its question: it keeps the tool's result and writes."""

    def turn(seen: Seen) -> Any:
        results.append(seen.tool_results[-1] if seen.tool_results else "")
        return [WriteFile("port.txt", "8080\n")]

    return turn


async def asked(room: Room) -> Any:
    """The question's post in the card's room, with its three options."""
    post = await room.bot_says(re.escape(QUESTION))
    body = post["body"]
    assert "1️⃣" in body and "2️⃣" in body and "3️⃣" in body and "4️⃣" not in body
    assert "8080" in body and "/answer" in body
    return post


@pytest.mark.parametrize("cli", list(CLIS))
async def test_the_owner_answers_with_a_reaction_and_the_answer_is_the_tools_result(
    cli: str, begin
) -> None:
    bot, room, agents = await begin(cli, bot_lines=("ask_timeout_s = 300",))
    results: list[str] = []
    agents.script(ASK, after_the_answer(results), finish("Listen on port 8080"))
    try:
        await room.say(f"/start {SLUG}")
        post = await asked(room)
        [row] = bot.query("SELECT state, kind, options FROM questions WHERE kind = 'agent'")
        assert row["state"] == "open"
        await room.react(stanza_id(post, room.room), "2️⃣")
        await room.bot_says(rf"{SLUG}: review approve")
        assert len(results) == 1 and "The owner answered: 8080" in results[0], results
        [row] = bot.query("SELECT state, answer, answered_via FROM questions WHERE kind = 'agent'")
        assert (row["state"], row["answer"], row["answered_via"]) == ("answered", "8080", "option")
        assert bot.phase(SLUG) == "ready_for_deployment"
        assert committed(bot) == "port.txt"
    finally:
        await bot.stop()


@pytest.mark.parametrize("cli", list(CLIS))
async def test_nobody_answers_in_time_and_the_run_decides_itself(cli: str, begin) -> None:
    bot, room, agents = await begin(cli, bot_lines=("ask_timeout_s = 5",))
    results: list[str] = []
    agents.script(ASK, after_the_answer(results), finish("Listen on port 80"))
    try:
        await room.say(f"/start {SLUG}")
        await asked(room)
        told = await room.bot_says(r"no answer|not answered|no longer waits|nobody answered")
        assert SLUG in told["body"]
        await room.bot_says(rf"{SLUG}: review approve")
        assert len(results) == 1 and NO_ANSWER in results[0], results
        [row] = bot.query("SELECT state FROM questions WHERE kind = 'agent'")
        assert row["state"] == "cancelled"
        assert committed(bot) == "port.txt"
    finally:
        await bot.stop()


@pytest.mark.parametrize("cli", list(CLIS))
async def test_the_owner_answers_from_the_web_board(
    cli: str, begin, tmp_path: Path, unused_tcp_port: int
) -> None:
    (tmp_path / "secrets").mkdir(exist_ok=True)
    (tmp_path / "secrets" / "web").write_text("web-board-token-for-the-test\n")
    web = f'\n[web]\nlisten = "127.0.0.1:{unused_tcp_port}"\ntoken_file = "secrets/web"\n'
    bot, room, agents = await begin(cli, bot_lines=("ask_timeout_s = 300",), extra=web)
    results: list[str] = []
    agents.script(ASK, after_the_answer(results), finish("Listen on port 9090"))
    try:
        await room.say(f"/start {SLUG}")
        await asked(room)
        [row] = bot.query("SELECT id FROM questions WHERE kind = 'agent' AND state = 'open'")
        site = f"http://127.0.0.1:{unused_tcp_port}"
        token = await sign_in_link(tmp_path)
        async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as browser:
            async with browser.post(f"{site}/signin", data={"token": token}) as signed:
                assert signed.status == 200, await signed.text()
            async with browser.get(f"{site}/card/{SLUG}") as page:
                html = await page.text()
            csrf = CSRF.search(html)
            assert csrf is not None and "9090" in html
            form = {"csrf": csrf.group(1), "action": "answer"}
            target = f"{site}/card/{SLUG}/act?option=3&question={row['id']}"
            async with browser.post(target, data=form) as acted:
                assert acted.status == 200, await acted.text()
        await room.bot_says(rf"{SLUG}: review approve")
        assert len(results) == 1 and "The owner answered: 9090" in results[0], results
        [row] = bot.query("SELECT answer, answered_via FROM questions WHERE kind = 'agent'")
        assert (row["answer"], row["answered_via"]) == ("9090", "web")
        assert committed(bot) == "port.txt"
    finally:
        await bot.stop()


async def sign_in_link(root: Path) -> str:
    """A sign-in link for the owner, issued on the bot's own board (as /web does)."""
    store = await Store.open(str(root / "board.sqlite3"))
    try:
        board = BoardService(store, root / "repo")
        owner = "xmpp:" + _owner_jid(root)
        return (await board.web_sessions.issue(owner)).token
    finally:
        await store.close()


def _owner_jid(root: Path) -> str:
    text = (root / "bot.toml").read_text()
    found = re.search(r'owners = \["([^"]+)"\]', text)
    assert found is not None
    return found.group(1)


async def test_a_proposal_makes_nothing_until_the_owner_confirms(begin) -> None:
    cli = "claude"
    bot, room, agents = await begin(cli, bot_lines=("ask_timeout_s = 300",))
    propose = Call(
        "propose_card",
        {"title": "Rate limit the login", "goal": "Slow down guessing.", "scope": "login only"},
    )
    agents.script(propose, [WriteFile("port.txt", "8080\n")], finish("Listen on port 8080"))
    try:
        await room.say(f"/start {SLUG}")
        proposed = await room.bot_says(r"Rate limit the login")
        await room.bot_says(rf"{SLUG}: review approve")
        # Built and reviewed; the proposal still waits, and no card came of it.
        assert [r["slug"] for r in bot.query("SELECT slug FROM cards")] == [SLUG]
        [pending] = bot.query("SELECT id, state, slug FROM proposals")
        assert pending["state"] == "pending"
        await room.react(stanza_id(proposed, room.room), "👍")
        await room.bot_says(re.escape(pending["slug"]))
        assert sorted(r["slug"] for r in bot.query("SELECT slug FROM cards")) == sorted(
            [SLUG, pending["slug"]]
        )
        assert bot.phase(pending["slug"]) == "planned"
    finally:
        await bot.stop()
