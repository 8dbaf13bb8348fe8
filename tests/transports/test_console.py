"""Console transport: line syntax, numbering, push/pop, and real streams."""

from __future__ import annotations

import asyncio
import io

import pytest

from chatbot.transports.base import (
    Identity,
    IncomingEdit,
    IncomingEvent,
    IncomingMessage,
    IncomingReaction,
    Outgoing,
)
from chatbot.transports.console import ConsoleSettings, ConsoleTransport, Malformed, parse_line

OWNER = Identity("console", "owner")


@pytest.mark.parametrize(
    "line, added, removed, target",
    [
        ("+3 👍", {"👍"}, set(), "3"),
        ("+1 3 👍", {"👍"}, set(), "3"),  # the literal form: "+1 <message-number> 👍"
        ("+ 12 ✅", {"✅"}, set(), "12"),
        ("-3 👍", set(), {"👍"}, "3"),
        # Keys typed plainly (issue 34): a digit is that option, +1 and -1 the thumbs.
        ("+5 2", {"2️⃣"}, set(), "5"),
        ("+1 3 4", {"4️⃣"}, set(), "3"),
        ("+5 +1", {"👍"}, set(), "5"),
        ("+5 -1", {"👎"}, set(), "5"),
        ("-5 -1", set(), {"👎"}, "5"),
    ],
)
def test_reaction_syntax(line: str, added: set, removed: set, target: str) -> None:
    ev = parse_line(line, owner=OWNER, message_id="9")
    assert isinstance(ev, IncomingReaction)
    assert ev.added == added and ev.removed == removed and ev.target_id == target
    assert ev.envelope.sender == OWNER


def test_reply_edit_and_plain_lines() -> None:
    reply = parse_line(">4 yes, go", owner=OWNER, message_id="5")
    assert isinstance(reply, IncomingMessage) and reply.reply_to == "4" and reply.text == "yes, go"
    edit = parse_line("*4 /approve", owner=OWNER, message_id="6")
    assert isinstance(edit, IncomingEdit) and edit.target_id == "4"
    plain = parse_line("> a quote, 3 of them", owner=OWNER, message_id="7")
    assert isinstance(plain, IncomingMessage) and plain.text == "> a quote, 3 of them"
    assert parse_line("   ", owner=OWNER, message_id="8") is None


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        ("+1", "react"),  # no key: before issue 34, sent as a message (an answer!)
        ("+5", "react"),
        ("+5 yes", "react"),
        ("+5 10", "react"),
        ("+5 👍 thanks", "react"),
        ("-5", "react"),
        (">5", "reply"),
        (">5German", "reply"),
        ("*5", "edit"),
    ],
)
def test_a_line_that_only_looks_like_the_syntax_is_malformed(line: str, kind: str) -> None:
    assert parse_line(line, owner=OWNER, message_id="9") == Malformed(kind, line)


async def test_a_malformed_line_gets_a_hint_and_no_number() -> None:
    out = io.StringIO()
    got: list[IncomingEvent] = []

    async def keep(ev: IncomingEvent) -> None:
        got.append(ev)

    console = ConsoleTransport(ConsoleSettings(owner="alice"), output=out, handler=keep)
    assert await console.push("+3") is None
    await console.push("hello")
    assert [type(e).__name__ for e in got] == ["IncomingMessage"]
    hint, echo = out.getvalue().splitlines()
    assert hint.startswith("Not sent: '+3' is no reaction. React with +N and an emoji")
    assert echo == "[#1] alice: hello"  # the hint took no number
    german = io.StringIO()
    console = ConsoleTransport(ConsoleSettings(locale="de"), output=german)
    await console.push(">2")
    assert german.getvalue().startswith("Nicht gesendet: '>2' ist keine Antwort.")


async def test_push_and_pop_like_a_test_bot() -> None:
    out = io.StringIO()
    console = ConsoleTransport(ConsoleSettings(owner="alice"), output=out)

    ev_ids: list[str] = []

    async def echo(ev: IncomingEvent) -> None:
        assert isinstance(ev, IncomingMessage)
        ev_ids.append(ev.envelope.message_id)
        assert ev.envelope.sender == Identity("console", "alice") and ev.envelope.is_direct
        await console.send(
            Outgoing(ev.envelope.chat, f"you said {ev.text}", reply_to=ev.envelope.message_id)
        )
        await console.react(ev.envelope.chat, ev.envelope.message_id, "👀")

    console.on_event(echo)
    await console.start()
    await console.push("hello")
    said = await console.pop()
    assert said.text == "you said hello" and said.reply_to == "1" and said.number == 2
    assert ev_ids == [console.message_id(1)]
    reaction = await console.pop()
    assert reaction.reaction == "👀" and reaction.reply_to == "1"
    assert out.getvalue().splitlines() == [
        "[#1] alice: hello",
        "[#2] (re #1) bot: you said hello",
        "[#3] bot reacted 👀 to #1",
    ]
    await console.stop()


async def test_reads_lines_from_an_input_stream_until_eof() -> None:
    got: list[IncomingEvent] = []

    async def handler(ev: IncomingEvent) -> None:
        got.append(ev)

    console = ConsoleTransport(
        input=io.StringIO("/status\n\n+1 👍\n"), output=io.StringIO(), handler=handler
    )
    await console.start()
    await asyncio.wait_for(console.closed.wait(), 2)
    await console.stop()
    assert [type(e).__name__ for e in got] == ["IncomingMessage", "IncomingReaction"]
    assert got[1].target_id == console.message_id(1)


async def test_message_ids_differ_across_restarts_though_numbers_repeat() -> None:
    # Numbers start at 1 on every start; the ids behind them must not repeat, or a
    # reaction on today's #1 would find what yesterday's #1 was about.
    first, second = ConsoleTransport(output=io.StringIO()), ConsoleTransport(output=io.StringIO())
    got: list[IncomingEvent] = []

    async def keep(ev: IncomingEvent) -> None:
        got.append(ev)

    ids = []
    for console in (first, second):
        console.on_event(keep)
        ids.append(await console.send(Outgoing(console.owner, "a notice")))
        await console.push("+1 👍")
    assert ids[0] != ids[1]
    assert [e.target_id for e in got] == ids
