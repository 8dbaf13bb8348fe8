"""`chatbot mcp [--as OWNER]`: serve the board to the owner's assistants on stdio.

stdout is the protocol's: everything else this process says goes to stderr (the log
is set up so). With `--as`, what the tools change is announced as the bot announces
chat's moves: a notifier writes to the outbox, and the running bot sends it.
"""

from __future__ import annotations

import argparse
import sys

from chatbot.config import Config

EXIT_OK = 0
EXIT_USAGE = 2


def add_parser(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--as",
        dest="as_owner",
        metavar="IDENTITY",
        help="act as this owner (as written in [bot] owners): the tools that change the "
        "board run as chat's commands do; without it every tool only reads",
    )


async def mcp_command(config: Config, as_owner: str | None) -> int:
    # Here, not at the top: the SDK and the chat side load for this command only.
    from chatbot.app.mcp_server import make_server
    from chatbot.app.serve import attach_notifier
    from chatbot.app.startup import Running, open_board
    from chatbot.chat.intake import ChatIntake
    from chatbot.chat.mcp_acts import McpActs, NotAnOwner, owner_identity

    async with open_board(config) as board:
        acts = None
        if as_owner is not None:
            intake = ChatIntake.from_config(board, config)
            try:
                identity = owner_identity(intake, as_owner)
            except NotAnOwner as refused:
                print(f"chatbot mcp: {refused}", file=sys.stderr)
                return EXIT_USAGE
            acts = McpActs(intake, identity)
            attach_notifier(Running(config, board.store, board, None, "mcp"))
        await make_server(board, config, acts).run_stdio_async()
    return EXIT_OK
