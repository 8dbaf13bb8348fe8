"""`chatbot` command line: check a configuration, look at and move the board, run the bot."""

from __future__ import annotations

import argparse
import asyncio
import getpass
import logging
import os
import sys
from collections.abc import Awaitable, Callable
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING

from chatbot.app import cli_mcp, cli_reads, cli_routines, demo, logformat
from chatbot.app.cli_runs import pipeline_runs, runs
from chatbot.app.startup import StoreError, open_board, running_bot, stop_on_signals
from chatbot.board import (
    AlreadyAnswered,
    BoardError,
    BoardService,
    UnknownCard,
    budget_stopped,
)
from chatbot.chat.commands import BY_NAME, INSPECT_MODES, SKIP_CHECKS
from chatbot.chat.texts import say
from chatbot.config import Config, ConfigError, load_config
from chatbot.domain.counted import counted
from chatbot.domain.transitions import Action, TransitionRefused
from chatbot.notify.format import usd
from chatbot.pipeline import sandboxing
from chatbot.transports.networks import NETWORKS

if TYPE_CHECKING:
    from chatbot.pipeline.worker import Worker  # loaded by startup only when one is made

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2

log = logging.getLogger("chatbot")


def _version() -> str:
    try:
        return metadata.version("intent-board-chatbot")
    except metadata.PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown (not installed)"


# Card commands of the chat that the shell offers too, from the same command table.
CARD_COMMANDS = (
    "start",
    "split",
    "research",
    "inspect",
    "fix",
    "retry",
    "cancel",
    "archive",
    "deploy",
)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="chatbot", description=__doc__)
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    _common_options(parser, argparse.SUPPRESS)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, text: str) -> argparse.ArgumentParser:
        # The option may come before or after the subcommand: before sets the
        # default, after overrides it (SUPPRESS keeps an absent one from resetting it).
        found = sub.add_parser(name, help=text, description=text[0].upper() + text[1:] + ".")
        _common_options(found, argparse.SUPPRESS)
        return found

    check = command(
        "check", "validate the configuration, then try each chat server, room and agent CLI"
    )
    check.add_argument(
        "--no-connect", action="store_true", help="only validate; do not log in to chat servers"
    )
    check.add_argument(
        "--show-config",
        action="store_true",
        help="also print the resolved configuration (defaults filled in, secrets by path)",
    )
    cards = command("cards", "the board by phase (intent files are imported first)")
    cards.add_argument("--json", action="store_true", help="machine-readable output")
    card = command("card", "one card with its history")
    card.add_argument("slug")
    card.add_argument("--json", action="store_true", help="machine-readable output")
    for name in CARD_COMMANDS:
        chat_command = BY_NAME[name]
        moved = command(name, say("en", chat_command.help_key))
        moved.add_argument("slug")
        if name == "inspect":
            moved.add_argument("mode", nargs="?", choices=tuple(INSPECT_MODES), default="status")
        if SKIP_CHECKS in chat_command.args:
            moved.add_argument(
                "--skip-checks",
                action="store_true",
                help="go on once although the commit's checks did not pass",
            )
    inbox = command("inbox", say("en", BY_NAME["inbox"].help_key))
    inbox.add_argument("--json", action="store_true", help="machine-readable output")
    routines = command("routines", say("en", BY_NAME["routines"].help_key))
    routines.add_argument("--json", action="store_true", help="machine-readable output")
    why = command("why", say("en", BY_NAME["why"].help_key))
    why.add_argument("slug")
    why.add_argument("--json", action="store_true", help="machine-readable output")
    allow = command("allow", say("en", BY_NAME["allow"].help_key))
    allow.add_argument("slug", nargs="?", help="the card; without it: today's waiting runs")
    answer = command("answer", say("en", BY_NAME["answer"].help_key))
    answer.add_argument("slug")
    answer.add_argument("text")
    cli_mcp.add_parser(command("mcp", "serve the board to your own assistants over MCP (stdio)"))
    runs = command("runs", "queued and running jobs, or the runs of one pipeline")
    runs.add_argument("--json", action="store_true", help="machine-readable output")
    runs.add_argument(
        "--pipeline",
        metavar="ID",
        help="the runs of this pipeline (its id, or a card slug for that card's pipeline)",
    )
    init = command(
        "init",
        "write DIR/bot.toml and placeholder secrets, ready to fill in: with --xmpp or "
        "--matrix a short one for that network, without either the example with every key",
    )
    short = init.add_mutually_exclusive_group()
    for network in NETWORKS.values():
        if network.starter is None:
            continue
        short.add_argument(
            f"--{network.name}",
            dest="network",
            action="store_const",
            const=network.name,
            help=f"a short configuration for {network.starter.title} only",
        )
    init.add_argument("--repo", metavar="PATH", help="the git repository of the board")
    init.add_argument(
        "--owner", metavar="ID", help="who may decide: a bare JID (XMPP) or @user:server (Matrix)"
    )
    init.add_argument("dir", type=Path, help="the folder to write into (made if missing)")
    backup = command("backup", "copy the board, the Matrix crypto store and the configuration")
    backup.add_argument("dir", type=Path, help="a new or empty folder (the bot may run)")
    restore = command("restore", "put a backup back where --config says; nothing changes on error")
    restore.add_argument("dir", type=Path, help="the folder `chatbot backup` wrote")
    restore.add_argument("--force", action="store_true", help="restore over a non-empty board")
    run = command("run", "run the bot: chat, worker and notifications")
    run.add_argument(
        "--until-idle",
        action="store_true",
        help="run the worker without chat until no job is queued or running, then exit",
    )
    run.add_argument(
        "--no-worker",
        action="store_true",
        help="chat, board and notifications only: `chatbot worker` processes run the jobs",
    )
    worker = command(
        "worker", "run only a worker (no chat, no notifications sent): one of many on any host"
    )
    worker.add_argument(
        "--until-idle",
        action="store_true",
        help="exit once no job is queued or running",
    )
    return parser


def _common_options(parser: argparse.ArgumentParser, default: object) -> None:
    parser.add_argument(
        "--config",
        default=default,
        help="the TOML configuration (default: $CHATBOT_CONFIG, else the console demo)",
    )
    parser.add_argument(
        "-v", "--verbose", action="store_true", default=default, help="log debug output"
    )


def _actor() -> str:
    # Whoever can run this command can already write the database: an owner.
    return f"cli:{getpass.getuser()}"


async def _guarded(board: BoardService, slug: str, work: Awaitable[str]) -> int:
    try:
        print(await work)
        return EXIT_OK
    except UnknownCard:
        return await cli_reads.unknown(board, slug)
    except (TransitionRefused, BoardError, AlreadyAnswered) as refused:
        print(f"refused: {refused}", file=sys.stderr)
        return EXIT_FAILURE


async def _move(
    board: BoardService,
    slug: str,
    action: Action,
    locale: str,
    payload: dict[str, object] | None = None,
) -> str:
    card = await board.act(slug, action, actor=_actor(), payload=payload)
    return f"{card.slug}: {card.phase.label(locale)}"


async def _answer(board: BoardService, slug: str, text: str, locale: str) -> str:
    card, _ = await board.answer(slug, text, actor=_actor())
    return f"{card.slug}: answered; now {card.phase.label(locale)}"


async def _allow(board: BoardService, slug: str | None, locale: str) -> int:
    """Past a spent budget: the card's stopped step (another card budget), or today's runs."""
    if slug is None:
        state = await board.budget.allow_day()
        if state is None:
            print(say(locale, "no_day_budget"), file=sys.stderr)
            return EXIT_FAILURE
        print(say(locale, "day_allowed", limit=usd(state.limit), spent=usd(state.spent)))
        return EXIT_OK
    try:
        stopped = budget_stopped(await board.reads.card(slug))
    except UnknownCard:
        return await cli_reads.unknown(board, slug)
    if stopped is None:
        print(say(locale, "not_budget_stopped", slug=slug), file=sys.stderr)
        return EXIT_FAILURE
    return await _guarded(board, slug, _move(board, slug, Action.ALLOW, locale))


def _init(args: argparse.Namespace) -> int:
    from chatbot.app.init import InitRefused, init, intents_note

    try:
        written = init(args.dir, args.network, repo=args.repo, owner=args.owner)
    except InitRefused as refused:
        print(f"chatbot: {refused}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as error:
        print(
            f"chatbot: cannot write {error.filename or args.dir}: {error.strerror}", file=sys.stderr
        )
        return EXIT_FAILURE
    print("wrote:")
    print("\n".join(f"  {path}" for path in written))
    if args.network is None:
        print(
            "(the example with every key; `chatbot init --xmpp DIR` or `--matrix DIR` "
            "writes a short one for one network)"
        )
    if note := intents_note(args.repo):
        print(note)
    print(f"next: chatbot check --config {args.dir / 'bot.toml'} --no-connect")
    return EXIT_OK


async def _run(config: Config, until_idle: bool, no_worker: bool = False) -> int:
    if until_idle and no_worker:
        print(
            "chatbot: --until-idle runs the worker; it cannot go with --no-worker", file=sys.stderr
        )
        return EXIT_USAGE
    async with running_bot(config, worker=not no_worker) as bot:
        if until_idle:
            assert bot.worker is not None
            await bot.prepare()
            await bot.worker.run(until_idle=True)
            return await _idle_report(bot.board, bot.worker, config.bot.locale)
        from chatbot.app.serve import serve

        stop = asyncio.Event()
        stop_on_signals(stop)
        await serve(bot, stop)
        return EXIT_OK


async def _idle_report(board: BoardService, worker: Worker, locale: str) -> int:
    print(await cli_reads.board_text(board, locale))
    if worker.held:
        print("runs wait for today's budget: `chatbot allow` lets them start", file=sys.stderr)
    failed = worker.failed_jobs
    if failed:
        print(f"{counted(failed, 'job')} failed; `chatbot card SLUG` shows why", file=sys.stderr)
        return EXIT_FAILURE
    return EXIT_OK


async def _work(config: Config, until_idle: bool) -> int:
    from chatbot.app.serve import work

    async with running_bot(config, chat=False) as bot:
        assert bot.worker is not None
        stop = asyncio.Event()
        stop_on_signals(stop)
        await work(bot, stop, until_idle=until_idle)
        if until_idle:
            return await _idle_report(bot.board, bot.worker, config.bot.locale)
        return EXIT_OK


async def _with_board(config: Config, work: Callable[[BoardService], Awaitable[int]]) -> int:
    async with open_board(config) as board:
        return await work(board)


def command_is_console_session(args: argparse.Namespace, config: Config) -> bool:
    return args.command == "run" and not args.until_idle and config.console is not None


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    # getattr: argparse sets only the options of the subcommand given
    args.config = getattr(args, "config", None) or os.environ.get("CHATBOT_CONFIG")
    args.verbose = getattr(args, "verbose", False)
    logformat.setup(verbose=args.verbose)
    if args.command == "init":
        return _init(args)
    if args.command == "restore":
        from chatbot.app.restore import restore

        if not args.config:
            print("chatbot: restore needs --config F: whose database it restores", file=sys.stderr)
            return EXIT_USAGE
        return restore(args.dir, Path(args.config), force=args.force)
    try:
        if args.config:
            config = load_config(Path(args.config))
        else:
            # The embedded default: the console demo, its state under ./var/console.
            config = demo.config()
            if args.command != "run":
                print(
                    "chatbot: no --config (or $CHATBOT_CONFIG): using the console demo in "
                    f"{demo.STATE}",
                    file=sys.stderr,
                )
    except ConfigError as error:
        print(f"chatbot: {error}", file=sys.stderr)
        return EXIT_USAGE
    if args.command in ("run", "worker") and (problem := sandboxing.start_problem(config)):
        print(f"chatbot: {problem}", file=sys.stderr)
        return EXIT_USAGE
    if command_is_console_session(args, config):
        # The terminal is the chat: keep the log out of the conversation.
        log_file = (config.bot.sqlite_file or config.bot.checkout).parent / "bot.log"
        logformat.to_file(log_file)
        print(f"intent board console; log in {log_file}; Ctrl-D or Ctrl-C to quit. Try /help.")
    logformat.use(config.bot.log_format)
    locale = config.bot.locale
    prefix = config.bot.command_prefixes[0]  # the chat writes commands with it
    command = args.command

    def board_command(board: BoardService) -> Awaitable[int]:
        if command == "cards":
            return cli_reads.cards_command(board, args.json, locale, prefix)
        if command == "card":
            return cli_reads.card_command(board, args.slug, args.json, locale, prefix)
        if command == "runs" and args.pipeline:
            return pipeline_runs(board, args.pipeline, args.json, locale)
        if command == "runs":
            return runs(board, config, args.json)
        if command == "allow":
            return _allow(board, args.slug, locale)
        if command == "inbox":
            return cli_reads.inbox_command(board, args.json, locale, prefix)
        if command == "routines":
            return cli_routines.routines_command(board, config, args.json, locale, prefix)
        if command == "why":
            return cli_reads.why_command(board, args.slug, args.json, locale, prefix)
        if command == "answer":
            return _guarded(board, args.slug, _answer(board, args.slug, args.text, locale))
        action = BY_NAME[command].action
        assert action is not None
        payload: dict[str, object] | None = (
            {"mode": INSPECT_MODES[args.mode]} if command == "inspect" else None
        )
        # getattr: only the subcommands that start a run have --skip-checks
        if getattr(args, "skip_checks", False):
            payload = {"skip_checks": True}
        return _guarded(board, args.slug, _move(board, args.slug, action, locale, payload))

    try:
        if command == "check":
            from chatbot.app.check import run_check

            # nio logs each failed try of an unreachable homeserver; check says it once.
            logging.getLogger("nio").setLevel(logging.ERROR)
            ok = run_check(config, not args.no_connect, show_config=args.show_config)
            return EXIT_OK if ok else EXIT_FAILURE
        if command == "backup":
            from chatbot.app.backup import backup

            return backup(config, args.dir)
        if command == "run":
            return asyncio.run(_run(config, args.until_idle, args.no_worker))
        if command == "worker":
            return asyncio.run(_work(config, args.until_idle))
        if command == "mcp":
            return asyncio.run(cli_mcp.mcp_command(config, args.as_owner))
        return asyncio.run(_with_board(config, board_command))
    except StoreError as error:
        print(f"chatbot: {error}", file=sys.stderr)
        return EXIT_FAILURE
    except KeyboardInterrupt:
        return EXIT_OK
