"""`chatbot mcp` as an owner's assistant meets it: the SDK's own client spawns the real
command on stdio, against a real board (SQLite in a temporary folder)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.types import CallToolResult, TextContent

from chatbot.domain.transitions import Action, By
from chatbot.store import Store
from chatbot.store import cards as card_store
from tests.inprocess import chatbot

FAKE_CODEX = str(Path(__file__).resolve().parents[1] / "bin" / "codex")
OWNER = "owner@example.org"
REQUESTER = "asker@example.org"

CONFIG = """
[bot]
owners = ["{owner}"]
requesters = ["{requester}"]
sandbox = "off"
database = "var/board.sqlite3"
repo = "repo"
[runtimes.codex]
binary = "{fake_codex}"
[lanes.light]
runtime = "codex"
model = "gpt-5-codex-mini"
iteration_limit = 10
[xmpp]
jid = "bot@example.org"
password_file = "pw"
rooms = ["board@conference.example.org"]
"""

READS = {"list_cards", "get_card", "inbox", "why", "runs", "budget"}
ACTS = {
    "start_card",
    "act_on_card",
    "answer_question",
    "steer_card",
    "deny_card",
    "draft_card",
    "comment_on_card",
    "decide_request",
}


@pytest.fixture
def config(tmp_path: Path) -> Path:
    intents = tmp_path / "repo" / "docs" / "intent"
    intents.mkdir(parents=True)
    (intents / "alpha.md").write_text("# Alpha\n")
    (intents / "beta.md").write_text("# Beta\n")
    subprocess.run(["git", "init", "-q", str(tmp_path / "repo")], check=True)
    (tmp_path / "pw").write_text("secret\n")
    path = tmp_path / "bot.toml"
    path.write_text(CONFIG.format(owner=OWNER, requester=REQUESTER, fake_codex=FAKE_CODEX))
    # The board as the bot leaves it: the intent files imported.
    done = chatbot("cards", "--config", str(path))
    assert done.returncode == 0, done.stderr
    return path


@asynccontextmanager
async def mcp(config: Path, *extra: str) -> AsyncIterator[ClientSession]:
    server = StdioServerParameters(
        command=sys.executable, args=["-m", "chatbot", "mcp", "--config", str(config), *extra]
    )
    async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


def text_of(result: CallToolResult) -> str:
    assert len(result.content) == 1
    content = result.content[0]
    assert isinstance(content, TextContent)
    return content.text


async def call(session: ClientSession, tool: str, **arguments: object) -> dict:
    result = await session.call_tool(tool, arguments)
    assert not result.is_error, text_of(result)
    return json.loads(text_of(result))


async def refused(session: ClientSession, tool: str, **arguments: object) -> str:
    result = await session.call_tool(tool, arguments)
    assert result.is_error, text_of(result)
    return text_of(result)


async def board_state(config: Path) -> list[tuple[str, str, int]]:
    """(slug, phase, number of events) of every card: what a refused call must not move."""
    store = await Store.open(config.parent / "var" / "board.sqlite3")
    try:
        found = []
        for card in await card_store.all_cards(store.reader):
            events = await store.reader.fetchall(
                "SELECT seq FROM events WHERE card_id = ?", (card.id,)
            )
            found.append((card.slug, card.phase.value, len(events)))
        return sorted(found)
    finally:
        await store.close()


async def outbox(config: Path) -> list[tuple[str, str]]:
    """(room, text) of every post waiting for the running bot to send."""
    store = await Store.open(config.parent / "var" / "board.sqlite3")
    try:
        rows = await store.reader.fetchall("SELECT room, text FROM outbox ORDER BY id")
        return [(row["room"], row["text"]) for row in rows]
    finally:
        await store.close()


async def fail_alpha(config: Path) -> None:
    """alpha's build failed: it waits in the owner's inbox with /retry and /fix."""
    store = await Store.open(config.parent / "var" / "board.sqlite3")
    try:
        async with store.transaction() as db:
            await card_store.transition(db, "alpha", Action.START, actor="t", by=By.OWNER)
            await card_store.transition(
                db, "alpha", Action.OPERATOR_DIRECT, actor="t", by=By.SYSTEM
            )
            await card_store.transition(
                db,
                "alpha",
                Action.BUILD_FAILED,
                actor="t",
                by=By.SYSTEM,
                reason="tests failed \x1b[31m<b>red</b>\u202e",
                failure_stage="builder",
                failure_detail="the builder's tests failed",
            )
    finally:
        await store.close()


async def test_read_tools_list_the_inbox_and_say_why(config: Path) -> None:
    await fail_alpha(config)
    async with mcp(config) as session:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert set(tools) == READS | ACTS
        assert all(tools[name].annotations.read_only_hint for name in READS)
        assert "--as" in (tools["start_card"].description or "")

        inbox = await call(session, "inbox")
        assert [(i["kind"], i["card"]) for i in inbox["items"]] == [("failed", "alpha")]
        assert "/retry alpha" in inbox["items"][0]["ways"]

        why = await call(session, "why", slug="alpha")
        assert (why["card"], why["phase"]) == ("alpha", "failed")
        assert why["ways"] == ["/retry alpha", "/fix alpha"]
        why_beta = await call(session, "why", slug="beta")
        assert why_beta["ways"] == ["/start beta"]
        assert (
            why_beta["text"]
            == "beta is planned and waits for you to start it. Way on: /start beta."
        )

        cards = await call(session, "list_cards", phase="planned")
        assert [c["slug"] for c in cards["cards"]] == ["beta"]
        card = await call(session, "get_card", slug="alpha")
        assert card["phase"] == "failed" and card["runs"] == []
        assert [e["action"] for e in card["events"]][-1] == "build_failed"
        # What came from an agent stays text: escapes shown, not acted on.
        raw = text_of(await session.call_tool("get_card", {"slug": "alpha"}))
        assert "\x1b" not in raw and "\u202e" not in raw
        assert "<b>red</b>\\u202e" in raw

        assert (await call(session, "runs"))["jobs"] == []
        assert "text" in await call(session, "budget")


async def test_an_owner_starts_a_card_via_mcp(config: Path) -> None:
    async with mcp(config, "--as", OWNER) as session:
        started = await call(session, "start_card", slug="beta")
        assert started["done"] and "beta" in started["said"]
        card = await call(session, "get_card", slug="beta")
        assert card["phase"] != "planned"
        last = card["events"][-1]
        assert (last["action"], last["actor"]) == ("start", f"xmpp:{OWNER} via mcp")
        # Chat's own refusal, with its ways on: a started card cannot start again.
        again = await refused(session, "start_card", slug="beta")
        assert "/start is not possible there" in again and "/cancel" in again
        # A new card from words, as /draft: the planner's dialogue starts, as the owner's.
        drafted = await call(session, "draft_card", text="A greeting page\nwith a form")
        cards = await call(session, "list_cards", phase="draft_running")
        assert len(cards["cards"]) == 1, drafted
        draft = await call(session, "get_card", slug=cards["cards"][0]["slug"])
        assert draft["events"][0]["actor"] == f"xmpp:{OWNER} via mcp"
    # The card's room hears it from the running bot, as for the web board: the notice of
    # the move and what was done via mcp, once (the refusal is the caller's alone).
    said = [text for room, text in await outbox(config) if room == "board@conference.example.org"]
    via = [text for text in said if "via mcp" in text]
    assert len(via) == 2 and via[0].startswith(f"🤖 {OWNER} via mcp: beta: /start")
    assert "beta" in via[0]


async def test_without_as_an_action_is_refused_and_changes_nothing(config: Path) -> None:
    before = await board_state(config)
    async with mcp(config) as session:
        message = await refused(session, "start_card", slug="beta")
        assert "--as" in message and "Nothing was changed" in message
        assert "--as" in await refused(session, "draft_card", text="a new thing")
    assert await board_state(config) == before


@pytest.mark.parametrize("identity", [REQUESTER, "stranger@example.org", "not an identity"])
def test_an_identity_that_is_no_owner_is_refused_at_start(config: Path, identity: str) -> None:
    done = chatbot("mcp", "--config", str(config), "--as", identity)
    assert done.returncode == 2
    assert done.stdout == ""  # the protocol's stream carries no prose
    assert f"--as {identity!r}" in done.stderr
    assert "[bot] owners" in done.stderr


async def test_bad_input_is_a_clear_tool_error_and_changes_nothing(config: Path) -> None:
    before = await board_state(config)
    async with mcp(config, "--as", OWNER) as session:
        unknown = await refused(session, "why", slug="alpah")
        assert "no card 'alpah'" in unknown and "alpha" in unknown
        assert "pattern" in await refused(session, "start_card", slug="Beta; rm -rf /")
        huge = await refused(session, "draft_card", text="x" * 100_000)
        assert "text" in huge and "4000" in huge
        control = await refused(session, "steer_card", slug="beta", text="go\x1b[2Jon")
        assert "control character U+001B" in control
        bidi = await refused(session, "draft_card", text="fine\u202eenif")
        assert "U+202E" in bidi
        wrong_type = await refused(session, "start_card", slug=["beta"])
        assert "slug" in wrong_type
        assert "option" in await refused(session, "answer_question", slug="beta", option=51)
        assert "phase" in await refused(session, "list_cards", phase="nowhere")
        assert "action" in await refused(session, "act_on_card", slug="beta", action="delete")
        # The unknown card through chat's own handler: its words, its suggestion.
        assert "alpha" in await refused(session, "start_card", slug="alpah")
    assert await board_state(config) == before


async def test_first_answer_within_seconds(config: Path) -> None:
    began = time.monotonic()
    async with mcp(config) as session:
        ready = time.monotonic()
        await call(session, "inbox")
        answered = time.monotonic()
    print(f"chatbot mcp: initialized in {ready - began:.2f}s, first answer {answered - ready:.3f}s")
    assert answered - began < 30
