"""`chatbot` command line: check a configuration, look at and move the board, run the bot."""

from __future__ import annotations

import argparse
import asyncio
import getpass
import json
import logging
import os
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from chatbot.app import open_board, running_bot, stop_on_signals
from chatbot.board import BoardError, BoardService, closest_slugs
from chatbot.config import Config, ConfigError, load_config
from chatbot.domain.transitions import Action, TransitionRefused
from chatbot.store import StoreError
from chatbot.store import cards as card_store
from chatbot.store.cards import UnknownCard
from chatbot.store.questions import AlreadyAnswered
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

    check = sub.add_parser(
        "check",
        parents=[common],
        help="validate the configuration, try each chat server and agent CLI",
    )
    check.add_argument(
        "--no-connect", action="store_true", help="only validate; do not log in to chat servers"
    )
    cards = sub.add_parser("cards", parents=[common], help="the board, by phase")
    cards.add_argument("--json", action="store_true", help="machine-readable output")
    card = sub.add_parser("card", parents=[common], help="one card with its history")
    card.add_argument("slug")
    card.add_argument("--json", action="store_true", help="machine-readable output")
    for name, text in (
        ("start", "let the operator decide how to build a planned card"),
        ("split", "let the planner split a card into smaller cards"),
        ("cancel", "stop a card's run and return it to where it was"),
    ):
        action = sub.add_parser(name, parents=[common], help=text)
        action.add_argument("slug")
    answer = sub.add_parser("answer", parents=[common], help="answer a card's open question")
    answer.add_argument("slug")
    answer.add_argument("text")
    sub.add_parser("runs", parents=[common], help="queued and running jobs")
    run = sub.add_parser("run", parents=[common], help="run the bot")
    run.add_argument(
        "--until-idle",
        action="store_true",
        help="run the worker without chat until no job is queued or running, then exit",
    )
    return parser


def _actor() -> str:
    # Whoever can run this command can already write the database: an owner.
    return f"cli:{getpass.getuser()}"


async def _unknown(board: BoardService, slug: str) -> int:
    hints = closest_slugs(slug, await board.slugs())
    hint = f"; did you mean {', '.join(hints)}?" if hints else ""
    print(f"no card '{slug}'{hint}", file=sys.stderr)
    return EXIT_FAILURE


async def _guarded(board: BoardService, slug: str, work: Awaitable[str]) -> int:
    try:
        print(await work)
        return EXIT_OK
    except UnknownCard:
        return await _unknown(board, slug)
    except (TransitionRefused, BoardError, AlreadyAnswered) as refused:
        print(f"refused: {refused}", file=sys.stderr)
        return EXIT_FAILURE


async def _move(board: BoardService, slug: str, action: Action, locale: str) -> str:
    card = await board.act(slug, action, actor=_actor())
    return f"{card.slug}: {card.phase.label(locale)}"


async def _answer(board: BoardService, slug: str, text: str, locale: str) -> str:
    card, _ = await board.answer(slug, text, actor=_actor())
    return f"{card.slug}: answered; now {card.phase.label(locale)}"


async def _runs(board: BoardService, config: Config) -> int:
    summary = await board.summary()
    if not summary.active_jobs:
        print("no job is queued or running")
        return EXIT_OK
    now = time.time()
    for job in summary.active_jobs:
        card = await card_store.get_by_id(board.store.reader, job.card_id) if job.card_id else None
        if job.kind in ("builder", "fixer") and card and card.runtime:
            runtime = card.runtime
        elif job.kind in ("builder", "deploy"):
            runtime = "-" if job.kind == "deploy" else config.lanes[job.lane].runtime
        else:
            runtime = config.role(job.kind).runtime
        since = job.started_at or job.created_at
        print(
            f"#{job.id:<5} {job.state.value:<8} {job.kind:<10} {card.slug if card else '-':<24} "
            f"lane {job.lane:<16} {runtime:<10} {now - since:7.0f}s"
        )
    return EXIT_OK


def _check(config: Config, connect: bool) -> int:
    print(f"configuration OK: {config.source}")
    print(f"transports: {', '.join(config.transports) or 'none'}")
    print(json.dumps(config.redacted(), indent=2, ensure_ascii=False))
    print(_repository_line(config))
    from chatbot.checks import check_runtimes, check_transports

    # The agent CLIs are local: always looked at; a missing one fails the full check.
    runtimes_ok = asyncio.run(check_runtimes(config))
    if not connect:
        return EXIT_OK
    return EXIT_OK if asyncio.run(check_transports(config)) and runtimes_ok else EXIT_FAILURE


def _repository_line(config: Config) -> str:
    """Where the cards come from, and whether builds can work there."""
    from chatbot.importer import scan

    repo = config.bot.repo
    if not repo.is_dir():
        if config.bot.seed_repo is not None:
            return f"repository: {repo} (created from {config.bot.seed_repo} at first start)"
        return f"repository: {repo} does NOT exist: no cards, no builds"
    files, rejected = scan(repo)
    line = f"repository: {repo}: {len(files)} intent files"
    if rejected:
        line += f", {len(rejected)} not importable (see `chatbot run` output)"
    if not (repo / ".git").exists():
        line += "; NOT a git repository: builds and deploys will fail"
    return line


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
        return await _unknown(board, slug)
    print(json.dumps(view_json(view), indent=2) if as_json else view_text(view, locale))
    return EXIT_OK


async def _run(config: Config, until_idle: bool) -> int:
    async with running_bot(config) as bot:
        if until_idle:
            await bot.prepare()
            await bot.worker.run(until_idle=True)
            print(summary_text(await bot.board.summary(with_slugs=True), config.bot.locale))
            return EXIT_OK
        from chatbot.service import serve

        stop = asyncio.Event()
        stop_on_signals(stop)
        await serve(bot, stop)
        return EXIT_OK


async def _with_board(config: Config, work: Callable[[BoardService], Awaitable[int]]) -> int:
    async with open_board(config) as board:
        return await work(board)


def _setup_logging(args: argparse.Namespace) -> None:
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    # The chat libraries log raw traffic at DEBUG: SASL exchanges and access tokens
    # included. Secrets are never logged, so they stay at INFO even with -v.
    for noisy in ("slixmpp", "nio", "aiohttp"):
        logging.getLogger(noisy).setLevel(logging.INFO)


def _log_to_file(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root.addHandler(handler)


def command_is_console_session(args: argparse.Namespace, config: Config) -> bool:
    return args.command == "run" and not args.until_idle and config.console is not None


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    _setup_logging(args)
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
    if command_is_console_session(args, config):
        # The terminal is the chat: keep the log out of the conversation.
        log_file = config.bot.database.parent / "bot.log"
        _log_to_file(log_file)
        print(f"intent board console; log in {log_file}; Ctrl-D or Ctrl-C to quit. Try /help.")
    locale = config.bot.locale
    command = args.command
    actions = {"start": Action.START, "split": Action.SPLIT, "cancel": Action.CANCEL}

    def board_command(board: BoardService) -> Awaitable[int]:
        if command == "cards":
            return _cards(board, args.json, locale)
        if command == "card":
            return _card(board, args.slug, args.json, locale)
        if command == "runs":
            return _runs(board, config)
        if command == "answer":
            return _guarded(board, args.slug, _answer(board, args.slug, args.text, locale))
        return _guarded(board, args.slug, _move(board, args.slug, actions[command], locale))

    try:
        if command == "check":
            return _check(config, not args.no_connect)
        if command == "run":
            return asyncio.run(_run(config, args.until_idle))
        return asyncio.run(_with_board(config, board_command))
    except StoreError as error:
        print(f"chatbot: {error}", file=sys.stderr)
        return EXIT_FAILURE
    except KeyboardInterrupt:
        return EXIT_OK
