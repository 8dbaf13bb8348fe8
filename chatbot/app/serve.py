"""The long-running bot: worker, chat transports, chat commands, notifier and outbox.

Everything runs until `stop` is set (a signal, or the console's input ending).
A chat server that is away does not stop the bot: its transport reconnects and
the outbox delivers what piled up, once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from functools import partial
from typing import TYPE_CHECKING

from chatbot.app import console_session, readiness
from chatbot.app.lifecycle import background, run_for_life
from chatbot.app.startup import Running
from chatbot.app.wiring import build_transports, destinations, transcriber
from chatbot.chat.authority import Authority
from chatbot.chat.commands import NAMES
from chatbot.domain import daily
from chatbot.domain.quiet import QuietHours
from chatbot.notify import deprecations
from chatbot.notify.digest import Digest
from chatbot.notify.notifier import Notifier
from chatbot.notify.outbox import OutboxSender
from chatbot.notify.reminders import Reminders
from chatbot.notify.store_health import StoreHealthNotices
from chatbot.pipeline import sandboxing
from chatbot.store.kv import TransportState
from chatbot.transports.base import (
    EventHandler,
    IncomingEvent,
    IncomingMessage,
    Transport,
    TransportError,
)
from chatbot.transports.console import ConsoleTransport
from chatbot.web import web_settings
from chatbot.web.metrics import CommandLatency, Metrics
from chatbot.web.metrics_http import MetricsDoor, MetricsListener, metrics_settings
from chatbot.web.server import WebBoard

if TYPE_CHECKING:
    from chatbot.chat.intake import ChatIntake
    from chatbot.chat.routine_clock import RoutineClock

log = logging.getLogger(__name__)

# How long readiness waits for the chat servers before it reports ready anyway: a
# server that is away must not keep the unit from starting (the worker runs already).
READY_WITHIN_S = 30.0


async def _tell_ready(transports: dict[str, Transport], within: float) -> None:
    """Ready once every chat transport is online, or after `within` seconds anyway."""
    waits = [asyncio.ensure_future(t.wait_online()) for t in transports.values()]
    try:
        if waits:
            await asyncio.wait(waits, timeout=within)
    finally:
        for wait in waits:
            wait.cancel()
    up = [name for name, transport in transports.items() if transport.online]
    down = sorted(set(transports) - set(up))
    status = "serving on " + (", ".join(up) or "no chat transport")
    if down:
        status += f"; still connecting: {', '.join(down)}"
    readiness.notify(f"READY=1\nSTATUS={status}")


def attach_notifier(bot: Running) -> Notifier:
    """Moves and runs become posts in the outbox, in their own transaction; the bot's
    outbox sender delivers them, also those a worker on another host wrote."""
    notifier = Notifier(
        bot.store,
        destinations(bot.config),
        bot.config.bot.locale,
        prefix=bot.config.bot.command_prefixes[0],
        command_names=NAMES,
        approval_timeout_s=bot.config.bot.approval_timeout_s,
        ask_timeout_s=bot.config.bot.ask_timeout_s,
        quiet=quiet_hours(bot.config.bot.quiet_hours),
    )
    bot.board.listeners.append(notifier)
    # What an owner does from the web board is said in the rooms too.
    bot.board.page_echo = notifier.said_on_web
    if bot.worker is not None:
        bot.worker.observers.append(notifier)
    return notifier


def quiet_hours(value: str | None) -> QuietHours | None:
    return QuietHours.parse(value) if value else None


def attach_metrics(bot: Running, transports: dict[str, Transport]) -> MetricsDoor | None:
    """This process's metrics, when `[web]` is configured: the worker's runs are counted."""
    settings = metrics_settings(bot.config)
    if settings is None:
        return None
    metrics = Metrics(
        bot.board.reads, transports_up=lambda: {name: t.online for name, t in transports.items()}
    )
    if bot.worker is not None:
        bot.worker.observers.append(metrics)  # it hears finished runs and checks
    return MetricsDoor(metrics, settings.tokens, settings.locale)


async def start_metrics_listener(bot: Running, door: MetricsDoor | None) -> MetricsListener | None:
    """`[web] metrics_listen`: /metrics on a listener of its own (a taken port is logged)."""
    settings = metrics_settings(bot.config)
    if door is None or settings is None or settings.listen is None:
        return None
    listener = MetricsListener(door, *settings.listen)
    return listener if await listener.start() else None


@contextlib.asynccontextmanager
async def metrics_listening(
    bot: Running, door: MetricsDoor | None
) -> AsyncIterator[MetricsListener | None]:
    """The metrics listener as a part: listening while entered (None: not configured,
    or its port is taken), stopped when left."""
    listener = await start_metrics_listener(bot, door)
    try:
        yield listener
    finally:
        if listener is not None:
            await listener.stop()


async def work(bot: Running, stop: asyncio.Event, *, until_idle: bool) -> None:
    """`chatbot worker`: only the worker (no chat, no outbox sender); its notices go
    into the outbox for the bot to send. It serves `[web] metrics_listen` when set."""
    assert bot.worker is not None
    attach_notifier(bot)
    async with metrics_listening(bot, attach_metrics(bot, {})):
        await bot.prepare(import_cards=False)
        readiness.notify(f"READY=1\nSTATUS=worker on {bot.store.name}")
        await bot.worker.run(until_idle=until_idle, stop=stop)


def timed(handle: EventHandler, latency: CommandLatency) -> EventHandler:
    """The chat intake's door, noting when each message arrived (a command's latency
    runs from here to its answer's hand-off to the transport)."""

    async def handle_timed(event: IncomingEvent) -> None:
        if isinstance(event, IncomingMessage):
            latency.arrived(event.envelope.transport, event.envelope.message_id)
        await handle(event)

    return handle_timed


def attach_chat(
    bot: Running,
    transports: dict[str, Transport],
    sender: OutboxSender,
    metrics: MetricsDoor | None = None,
) -> ChatIntake:
    from chatbot.chat.intake import ChatIntake

    chat = ChatIntake.from_config(bot.board, bot.config, transcriber=transcriber(bot.config))
    chat.outbox_settled = sender.settled
    # While the database takes no writes, answers cannot wait in the outbox.
    chat.replies.direct = sender.send_now
    handle: EventHandler = chat.handle
    if metrics is not None:
        handle = timed(chat.handle, metrics.metrics.latency)
        sender.handed.append(metrics.metrics.latency.handed)
    for transport in transports.values():
        transport.on_event(handle)
        # What strangers send changes nothing, so it leaves no rows behind either.
        transport.keep_state_for(chat.counts)
    return chat


async def start_routines(bot: Running, chat: ChatIntake) -> RoutineClock:
    """The routines' clock, with `[[routines]]` kept on the board first. Every bot on the
    board runs one; the board decides each occurrence once among them."""
    from chatbot.chat.routine_clock import RoutineClock
    from chatbot.chat.routines import keep_config_routines

    try:
        kept = await keep_config_routines(bot.board, bot.config)
    except ValueError as error:
        # No room to answer in: the chat's routines still run; `chatbot check` says why.
        log.error("routines: [[routines]] not kept: %s", error)
    else:
        if kept:
            log.info("routines: %d kept from the configuration", len(kept))
    return RoutineClock(chat)


async def start_web(
    bot: Running,
    transports: dict[str, Transport],
    chat: ChatIntake | None = None,
    metrics: MetricsDoor | None = None,
) -> WebBoard | None:
    """The live web board, when `[web]` is configured; its pages wake on every commit.

    A port that is taken is logged and the bot serves on without the board: chat is
    how the board is steered; a signed-in owner's actions on the page run as chat's
    commands do (chat/web_acts.py).
    """
    from chatbot.chat.web_acts import WebActs

    settings = web_settings(bot.config)
    if settings is None:
        return None
    # Whoever is no longer an owner is signed out of the web board (issue 33).
    # Sessions name identities as chat does ("xmpp:a@b"), not as the config's list.
    owners = sorted(str(owner) for owner in Authority.from_config(bot.config).owners)
    ended = await bot.board.web_sessions.keep_only(owners)
    if ended:
        log.info("web board: %d session(s) of former owners ended", ended)
    # A new token file signs every browser out, owners' sessions too (issue 33).
    if rotated := await bot.board.web_sessions.keep_for_token(settings.token):
        log.info("web board: the token changed; %d session(s) and sign-in link(s) ended", rotated)
    board_web = WebBoard(
        bot.board,
        settings,
        transports_up=lambda: {name: t.online for name, t in transports.items()},
        metrics=metrics,
        sessions=bot.board.web_sessions,
        acting=WebActs(chat) if chat is not None else None,
        spend=bot.board.budget.spend_report,
    )
    try:
        await board_web.start()
    except OSError as error:
        log.error(
            "web board: cannot listen on %s (%s); serving without it. Free the port or "
            "change [web] listen, then restart the bot",
            settings.url,
            error.strerror or error,
        )
        return None
    bot.store.on_commit.append(board_web.wake)
    log.info("web board on %s", board_web.url)
    return board_web


@contextlib.asynccontextmanager
async def web_board(
    bot: Running,
    transports: dict[str, Transport],
    chat: ChatIntake | None = None,
    metrics: MetricsDoor | None = None,
) -> AsyncIterator[WebBoard | None]:
    """The web board as a part (`start_web`): serving while entered, stopped when left."""
    board_web = await start_web(bot, transports, chat, metrics)
    try:
        yield board_web
    finally:
        if board_web is not None:
            await board_web.stop()


@contextlib.asynccontextmanager
async def chat_transports(transports: dict[str, Transport]) -> AsyncIterator[None]:
    """Every chat transport started, in order, while entered; all stopped when left.

    A transport that does not start is logged and keeps trying in the background; one
    that fails to stop does not keep the others from stopping.
    """
    try:
        for name, transport in transports.items():
            await _start_transport(name, transport)
        yield
    finally:
        for transport in transports.values():
            with contextlib.suppress(Exception):
                await transport.stop()


async def _start_transport(name: str, transport: Transport) -> None:
    try:
        await transport.start()
    except TransportError as error:
        # Said in the transport's own words (a refused login, a store key that does
        # not fit): what to do is in the line, a traceback would only bury it.
        log.error("%s transport did not start: %s", name, error)
    except Exception:  # noqa: BLE001 - one server down must not keep the others off
        log.exception("%s transport did not start; it keeps trying in the background", name)


# How long the end of the console's input waits for the answers still queued, and
# (piped input) for the runs it started.
CONSOLE_DRAIN_S = 10.0
CONSOLE_SETTLE_S = 900.0


async def _end_with_console(
    name: str, console: ConsoleTransport, sender: OutboxSender, stop: asyncio.Event
) -> None:
    await console.closed.wait()
    if console.pace is not None:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(CONSOLE_SETTLE_S):
                await console.pace()
    # Every line was handled before `closed`; its answers may still be in the outbox.
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(CONSOLE_DRAIN_S):
            await sender.drained(name)
    stop.set()


async def _console_sessions(
    bot: Running, transports: dict[str, Transport], sender: OutboxSender, web: bool
) -> None:
    for name, console in transports.items():
        if not isinstance(console, ConsoleTransport):
            continue
        if not console.interactive:
            console.pace = console_session.pacer(bot.board, partial(sender.drained, name))
        public_url = bot.config.web.public_url if web and bot.config.web else None
        if line := await console_session.sign_in_line(bot.board, str(console.owner), public_url):
            console.note(line)


async def serve(
    bot: Running,
    stop: asyncio.Event,
    *,
    transports: dict[str, Transport] | None = None,
) -> None:
    """Serve until `stop` is set: the parts start in order (web board, metrics listener,
    chat transports, helpers) and stop in the reverse order, after the loops that live
    as long as the service (worker, outbox, reminders, digest, routines) have ended.

    The web board starts before the chat transports because a console's sign-in line,
    printed before the console reads its first line, says whether the board serves; so
    it stops after them.
    """
    if transports is None:
        transports = build_transports(bot.config, TransportState(bot.store))
    # Every listener of the running bot besides the worker's own (startup.make_worker):
    # the notifier hears each move (in its transaction) and each run; the outbox wakes
    # on each commit; each transport hands every event to the chat intake.
    notifier = attach_notifier(bot)
    reminders = Reminders(notifier, bot.config.bot.remind_after_s, notifier.quiet)
    digest_at = bot.config.bot.digest_at
    digest = Digest(notifier, bot.board, daily.parse(digest_at)) if digest_at else None
    sender = OutboxSender(bot.store, transports, files=bot.board.files)
    bot.store.on_commit.append(sender.wake)
    bot.store.on_write.append(sender.wake)  # chat's replies are single statements
    metrics = attach_metrics(bot, transports)
    chat = attach_chat(bot, transports, sender, metrics)
    routines = await start_routines(bot, chat)
    StoreHealthNotices(sender.send_now, destinations(bot.config), bot.config.bot.locale).attach(
        bot.store.health
    )
    await bot.prepare()  # now that the room listens, recovered runs are reported there
    found = [(d.key, d.line()) for d in bot.config.deprecated]
    await deprecations.tell_owners(notifier, found)
    await deprecations.tell_unconfined(
        notifier, bot.config.bot.sandbox, sandboxing.without_protection(bot.config)
    )
    async with contextlib.AsyncExitStack() as parts:
        board_web = await parts.enter_async_context(web_board(bot, transports, chat, metrics))
        await parts.enter_async_context(metrics_listening(bot, metrics))
        await _console_sessions(bot, transports, sender, board_web is not None)
        await parts.enter_async_context(chat_transports(transports))
        log.info("serving on %s; stop with Ctrl-C", ", ".join(transports) or "no chat transport")
        # Ctrl-D (or the end of piped input) ends the session, once what was typed is answered.
        for name, console in transports.items():
            if isinstance(console, ConsoleTransport):
                ending = _end_with_console(name, console, sender, stop)
                await parts.enter_async_context(background(f"{name} session end", ending))
        ready = _tell_ready(transports, READY_WITHIN_S)
        await parts.enter_async_context(background("readiness", ready))
        await run_for_life(
            {
                # Without a worker (`run --no-worker`), `chatbot worker` processes run the jobs.
                "worker": bot.worker.run(stop=stop) if bot.worker else stop.wait(),
                "outbox": sender.run(stop),
                "reminders": reminders.run(stop),
                **({"digest": digest.run(stop)} if digest is not None else {}),
                "routines": routines.run(stop),
            }
        )
