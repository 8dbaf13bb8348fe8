"""What `chatbot check` says of routines: each `[[routines]]` entry read as the bot
will read it (its time, its room, its owner), its command parsed by chat's table and,
when the database is there, the card it names looked up on the board; and the routines
made in chat whose owner is no longer an owner (they stop at their next time)."""

from __future__ import annotations

import time

from chatbot.app.startup import open_store
from chatbot.board import BoardService, StoreError
from chatbot.chat.authority import Authority, Standing
from chatbot.chat.commands import DEFAULT_PREFIXES
from chatbot.chat.routines import RoutineRefused, checked_command, rows_of_config
from chatbot.chat.texts import say
from chatbot.config import Config
from chatbot.domain.schedules import local_words
from chatbot.transports.base import Identity


async def routine_lines(config: Config, connect: bool) -> list[tuple[str, bool]]:
    """(line, fine) pairs, one per routine; none when there are no routines at all."""
    try:
        rows = rows_of_config(config, time.time())
    except ValueError as error:
        return [(f"routines: {error}", False)]
    board = None
    sqlite = config.bot.sqlite_file
    if connect or sqlite is not None:
        try:
            store = await open_store(config) if sqlite is None or sqlite.exists() else None
        except StoreError:
            store = None  # the database line says why
        board = BoardService(store, config.bot.checkout) if store is not None else None
    prefixes = (*config.bot.command_prefixes, *DEFAULT_PREFIXES)
    found: list[tuple[str, bool]] = []
    try:
        for row in rows:
            name = f"routine {row.name}"
            if board is not None:
                try:
                    await checked_command(board, row.command, prefixes, "en")
                except RoutineRefused as refused:
                    found.append((f"{name}: {say('en', refused.key, **refused.params)}", False))
                    continue
            following = local_words(row.next_at, row.timezone) if row.next_at else "none left"
            where = f"{row.transport}:{row.target}"
            line = (
                f"{name}: {row.command} {row.when_text} ({row.timezone}) as {row.owner} "
                f"in {where}; next {following}"
            )
            found.append((line, True))
        if board is not None:
            found += await _chat_routines(config, board)
    finally:
        if board is not None:
            await board.store.close()
    return found


async def _chat_routines(config: Config, board: BoardService) -> list[tuple[str, bool]]:
    authority = Authority.from_config(config)
    found = []
    for row in await board.routines.listed():
        if row.source != "chat" or row.state not in ("active", "paused"):
            continue
        transport, _, who = row.owner.partition(":")
        if authority.role(Identity(transport, who)) is not Standing.OWNER:
            line = (
                f"routine #{row.id} ({row.command}): {row.owner} is no longer an owner; "
                "it stops at its next time"
            )
            found.append((line, True))
    return found
