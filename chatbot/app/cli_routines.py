"""`chatbot routines [--json]`: the routines with their next times, as `/routines` says
them in chat, or as JSON (`[[routines]]` of the configuration kept on the board first)."""

from __future__ import annotations

import json
import time

from chatbot.app.views import JSON_SCHEMA_VERSION
from chatbot.board import BoardService
from chatbot.chat.commands import shown_with
from chatbot.chat.routines import keep_config_routines, listing, routine_json, routine_zone
from chatbot.config import Config

EXIT_OK = 0


async def routines_command(
    board: BoardService, config: Config, as_json: bool, locale: str, prefix: str
) -> int:
    await keep_config_routines(board, config)
    rows = await board.routines.listed()
    if as_json:
        outcomes = await board.routines.outcomes()
        document = {
            "schema_version": JSON_SCHEMA_VERSION,
            "routines": [routine_json(row) for row in rows],
            "runs_by_outcome": outcomes,
            # The zone a new routine's times are read in: its owner's (/timezone), else this.
            "default_timezone": routine_zone(config),
            "owner_timezones": await board.routines.owner_zones(),
        }
        print(json.dumps(document, indent=2))
    else:
        print(shown_with(listing(rows, locale, time.time()), prefix))
    return EXIT_OK
