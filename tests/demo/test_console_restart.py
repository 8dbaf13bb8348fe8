"""Message numbers start again at #1 after a restart; the board must not mix them up.

Before the fix the console's message ids were the bare numbers, and the map of
posted messages to cards kept the old rows: after a restart, a reaction on the new
#2 acted on the card the old #2 was about.
"""

from __future__ import annotations

import asyncio
import io

from chatbot.app.serve import serve
from chatbot.app.startup import running_bot
from chatbot.transports.console import ConsoleSettings, ConsoleTransport
from tests.demo.serving import said, serving
from tests.demo.test_console_demo import demo_config


async def session(config, lines: list[tuple[str, str]]) -> list[str]:
    """One run of the bot: type each line, wait for an answer matching its pattern."""
    answers = []
    async with serving(config) as (console, bot):
        for line, pattern in lines:
            await console.push(line)
            answer = await said(console, pattern)
            answers.append(f"#{answer.number} {answer.text}")
    return answers


async def test_a_reaction_after_a_restart_acts_on_the_card_of_the_new_message(tmp_path) -> None:
    config = demo_config(tmp_path)
    [first] = await session(config, [("/status hello-endpoint", r"hello-endpoint")])
    assert first.startswith("#2 ")  # the owner's line is #1, the bot's answer #2
    [second, archived] = await session(
        config,
        [
            ("/status readme-badges", r"readme-badges"),
            # The same number as the first session's answer, now about another card.
            ("+2 🗄️", r"archive"),
        ],
    )
    assert second.startswith("#2 ")
    assert "readme-badges" in archived
    async with running_bot(config) as bot:
        assert (await bot.board.reads.card("readme-badges")).phase.value == "archived"
        assert (await bot.board.reads.card("hello-endpoint")).phase.value == "planned"


async def test_a_fixer_queued_before_the_upgrade_is_run_after_it(tmp_path) -> None:
    """Before the fixer ran in its card's lane it queued in `role:fixer`, a lane no
    worker serves now: starting the bot moves it where a worker will take it."""
    config = demo_config(tmp_path)
    async with running_bot(config) as bot:
        await bot.prepare()
        card = await bot.board.reads.card("hello-endpoint")
        async with bot.store.transaction() as db:
            await db.execute("UPDATE cards SET phase = 'fixer_running' WHERE id = ?", (card.id,))
            await db.execute(
                "INSERT INTO jobs (card_id, kind, lane, state, payload, created_at) "
                "VALUES (?, 'fixer', 'role:fixer', 'queued', '{}', 0)",
                (card.id,),
            )
    async with running_bot(config) as bot:
        await bot.prepare()
        row = await bot.store.reader.fetchone("SELECT lane FROM jobs WHERE kind = 'fixer'")
        assert bot.worker is not None
        assert row["lane"] in bot.worker.lanes


async def test_piped_commands_are_all_answered_before_the_session_ends(tmp_path) -> None:
    """The end of the input (Ctrl-D, or `printf ... | scripts/run`) used to stop the bot
    before the answers to the last lines were printed."""
    config = demo_config(tmp_path)
    typed = "/status nope-card\n/start\n/status hello-endpoint\n"
    out = io.StringIO()
    console = ConsoleTransport(
        ConsoleSettings(owner="owner@localhost", bot_name="board"),
        input=io.StringIO(typed),
        output=out,
    )
    async with running_bot(config) as bot:
        # serve() returns on its own: the input ends, the answers go out, the session stops.
        await asyncio.wait_for(serve(bot, asyncio.Event(), transports={"console": console}), 30)
    printed = out.getvalue()
    # Piped lines are read as a person reads: each after the answer to the one before.
    assert "[#2] (re #1) board: There is no card 'nope-card'." in printed
    assert "[#4] (re #3) board: <slug> is missing. Usage: /start <slug>" in printed
    assert "[#6] (re #5) board: hello-endpoint — Add a /hello endpoint" in printed
    async with running_bot(config) as bot:
        pending = await bot.store.reader.fetchall(
            "SELECT id FROM outbox WHERE transport = 'console' AND state = 'pending'"
        )
    assert not pending  # nothing left over to be printed, stale, at the next start
