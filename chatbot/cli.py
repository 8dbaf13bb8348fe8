"""`chatbot` command line: check a configuration, look at the board, run the bot."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path

from chatbot.board import BoardService, closest_slugs
from chatbot.config import Config, ConfigError, load_config
from chatbot.store import Store, StoreError
from chatbot.store.cards import UnknownCard
from chatbot.store.db import InstanceLock
from chatbot.views import summary_text, view_json, view_text

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2

log = logging.getLogger("chatbot")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="chatbot", description=__doc__)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--config",
        default=os.environ.get("CHATBOT_CONFIG"),
        help="the TOML configuration (default: $CHATBOT_CONFIG)",
    )
    common.add_argument("-v", "--verbose", action="store_true", help="log debug output")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    sub.add_parser("check", parents=[common], help="validate the configuration and print it")
    cards = sub.add_parser("cards", parents=[common], help="the board, by phase")
    cards.add_argument("--json", action="store_true", help="machine-readable output")
    card = sub.add_parser("card", parents=[common], help="one card with its history")
    card.add_argument("slug")
    card.add_argument("--json", action="store_true", help="machine-readable output")
    sub.add_parser("run", parents=[common], help="run the bot")
    return parser


async def _with_board(config: Config, work: Callable[[BoardService], Awaitable[int]]) -> int:
    store = await Store.open(config.bot.database)
    try:
        board = BoardService(store, config.bot.repo, default_lane=next(iter(config.lanes)))
        return await work(board)
    finally:
        await store.close()


def _check(config: Config) -> int:
    print(f"configuration OK: {config.source}")
    print(f"transports: {', '.join(config.transports) or 'none'}")
    print(json.dumps(config.redacted(), indent=2, ensure_ascii=False))
    return EXIT_OK


async def _cards(board: BoardService, as_json: bool, locale: str) -> int:
    if as_json:
        views = await board.all_views()
        print(json.dumps({"schema_version": 1, "cards": [view_json(v) for v in views]}, indent=2))
    else:
        print(summary_text(await board.summary(with_slugs=True), locale))
    return EXIT_OK


async def _card(board: BoardService, slug: str, as_json: bool, locale: str) -> int:
    try:
        view = await board.view(slug)
    except UnknownCard:
        hints = closest_slugs(slug, await board.slugs())
        hint = f"; did you mean {', '.join(hints)}?" if hints else ""
        print(f"no card '{slug}'{hint}", file=sys.stderr)
        return EXIT_FAILURE
    print(json.dumps(view_json(view), indent=2) if as_json else view_text(view, locale))
    return EXIT_OK


async def _run(config: Config) -> int:
    lock = InstanceLock(config.bot.database)
    lock.acquire()
    instance_id = uuid.uuid4().hex
    try:

        async def work(board: BoardService) -> int:
            recovered = await board.recover(instance_id)
            report = await board.import_cards()
            log.info(
                "board ready: %d imported, %d updated, %d unchanged, %d rejected, "
                "%d runs recovered",
                len(report.created),
                len(report.updated),
                report.unchanged,
                len(report.rejected),
                len(recovered),
            )
            for path, why in report.rejected:
                print(f"not imported: {path}: {why}", file=sys.stderr)
            print(summary_text(await board.summary(with_slugs=True), config.bot.locale))
            return EXIT_OK

        return await _with_board(config, work)
    finally:
        lock.release()


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    if not args.config:
        print(
            "chatbot: no configuration: pass --config FILE or set CHATBOT_CONFIG", file=sys.stderr
        )
        return EXIT_USAGE
    try:
        config = load_config(Path(args.config))
    except ConfigError as error:
        print(f"chatbot: {error}", file=sys.stderr)
        return EXIT_USAGE
    locale = config.bot.locale
    try:
        if args.command == "check":
            return _check(config)
        if args.command == "cards":
            return asyncio.run(_with_board(config, lambda b: _cards(b, args.json, locale)))
        if args.command == "card":
            return asyncio.run(
                _with_board(config, lambda b: _card(b, args.slug, args.json, locale))
            )
        if args.command == "run":
            return asyncio.run(_run(config))
    except StoreError as error:
        print(f"chatbot: {error}", file=sys.stderr)
        return EXIT_FAILURE
    except KeyboardInterrupt:
        return EXIT_OK
    return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
