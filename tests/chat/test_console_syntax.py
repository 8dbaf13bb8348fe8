"""The console's own syntax at the chat (issue 34): its /help ends with `>N`, `+N` and
`*N`, a plainly typed key (`+5 2`, `+5 +1`) answers like the emoji, and a line that only
looks like one gets a hint and is not sent."""

from __future__ import annotations

import io

from chatbot.chat.authority import Authority
from chatbot.domain.phases import Phase
from chatbot.store import questions as question_store
from chatbot.transports.base import Identity
from chatbot.transports.console import ConsoleSettings, ConsoleTransport

from .conftest import OWNER, Env, make_env, msg

AT_CONSOLE = Identity("console", "owner")


def console_env(store, tmp_path, locale: str = "en") -> tuple[Env, ConsoleTransport, io.StringIO]:
    env = make_env(store, tmp_path, locale=locale, authority=Authority.of([OWNER, AT_CONSOLE]))
    out = io.StringIO()
    console = ConsoleTransport(ConsoleSettings(locale=locale), output=out, handler=env.chat.handle)
    return env, console, out


async def test_the_consoles_help_ends_with_its_syntax(store, tmp_path) -> None:
    env, console, _ = console_env(store, tmp_path)
    await env.new()
    for asked in ("/help", "/help all"):
        await console.push(asked)
        # The whole list with the console's lines is two messages: none is cut short.
        text = "\n".join(row.text for row in await env.new())
        assert "left out" not in text
        assert "\n>N text — reply to message N" in text, asked
        assert "\n+N emoji — react to message N: +N 👍; +N 2 picks option 2 (2️⃣)" in text
        assert "\n*N text — correct message N" in text
    # Anywhere else there is no such syntax: chat clients reply and react by themselves.
    assert ">N" not in (await env.one(msg("/help"))).text
    assert ">N" not in (await env.one(msg("/help all"))).text


async def test_the_consoles_help_in_german(store, tmp_path) -> None:
    env, console, _ = console_env(store, tmp_path, "de")
    await env.new()
    await console.push("/help")
    [row] = await env.new()
    assert "In dieser Konsole hat jede Nachricht eine Nummer [#N]:" in row.text
    assert "+N 2 wählt Option 2 (2️⃣)" in row.text


async def _question(env: Env, console: ConsoleTransport, number: int) -> None:
    await env.card("login", Phase.NEEDS_HUMAN)
    await env.ask(
        "login",
        options=["oauth", "password"],
        message_id=console.message_id(number),
        room=AT_CONSOLE,
    )


async def test_a_plain_digit_picks_that_option(store, tmp_path) -> None:
    env, console, _ = console_env(store, tmp_path)
    await _question(env, console, 5)
    await console.push("+5 2")
    question = await question_store.get(env.store.reader, 1)
    assert question is not None and question.answer == "password"
    assert await env.phase("login") is Phase.OPERATOR_RUNNING


async def test_plus_one_is_a_thumbs_up(store, tmp_path) -> None:
    env, console, _ = console_env(store, tmp_path)
    card = await env.card("login")
    await env.posted(console.message_id(3), room=AT_CONSOLE, card_id=card.id)
    await env.new()
    await console.push("+3 +1")
    # 👍 reached the chat: on a card with nothing to accept, it says so.
    [row] = await env.new()
    assert row.text == "There is nothing on this card to accept."


async def test_a_malformed_line_gets_a_hint_and_nothing_is_sent(store, tmp_path) -> None:
    env, console, out = console_env(store, tmp_path)
    await _question(env, console, 5)
    await env.new()
    # "+5" alone would have been taken for the answer to the one open question.
    for line in ("+5", "+5 yes", ">5", "*5"):
        assert await console.push(line) is None
    assert await env.new() == []
    question = await question_store.get(env.store.reader, 1)
    assert question is not None and question.state == "open"
    hints = out.getvalue().splitlines()
    assert len(hints) == 4 and all(h.startswith("Not sent: ") for h in hints)
    assert "+5 2 (option 2)" in hints[0] and ">5 German" in hints[2]
