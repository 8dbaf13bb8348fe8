"""The board's connections: capped below the process's descriptors, a deadline for the
request head, and a malformed request said in one short line.

The board runs inside the bot, and each connection is a descriptor the bot may need
for an intent file, the database or an agent's pipes. So the board holds at most
`Caps.connections` at once. A connection over the cap makes room by closing the one
that has waited longest without a request being handled (a head not finished, or an
idle keep-alive); only when every connection is busy is it turned away with 503.
aiohttp's keep-alive timer runs from the moment a connection opens, so with it set to
the header timeout a connection that has not sent a whole request head in time closes.

aiohttp logs a malformed request as a traceback with the raw bytes (an Authorization
header among them); here it is one line naming the peer and the kind of fault, and
at most one such line every `REPORT_EVERY_S`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError
from aiohttp.web_protocol import RequestHandler

from chatbot.web.settings import Caps

log = logging.getLogger(__name__)
# aiohttp logs some bad requests itself, at DEBUG with their bytes: its logger for the
# board stays at INFO whatever level the root logger has.
QUIET = logging.getLogger(f"{__name__}.aiohttp")
QUIET.setLevel(logging.INFO)

REPORT_EVERY_S = 10.0
LISTEN_QUEUE = 128
# asyncio's own report when accept() finds no descriptor left (logged per attempt).
ACCEPT_FAILED = "socket.accept() out of system resource"

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class Reports:
    """At most one line per kind every `every_s`; the next one says how many were held."""

    def __init__(
        self, every_s: float = REPORT_EVERY_S, clock: Callable[[], float] = time.monotonic
    ):
        self._every_s = every_s
        self._clock = clock
        self._last: dict[str, float] = {}
        self._held: dict[str, int] = {}

    def due(self, kind: str) -> int | None:
        """None: hold this one back; else how many were held back since the last line."""
        now = self._clock()
        last = self._last.get(kind)
        if last is not None and now - last < self._every_s:
            self._held[kind] = self._held.get(kind, 0) + 1
            return None
        self._last[kind] = now
        return self._held.pop(kind, 0)

    def say(self, kind: str, level: int, text: str, *args: object, exc_info: Any = None) -> None:
        held = self.due(kind)
        if held is None:
            return
        if held:
            text += f" ({held} more since the last such line)"
        log.log(level, text, *args, exc_info=exc_info)


def _peer(peername: Any) -> str:
    if isinstance(peername, (list, tuple)) and peername:
        return str(peername[0])
    return "an unknown peer"


class Gate:
    """Which connections the board holds: admitted under the cap, idle ones given up first."""

    def __init__(self, caps: Caps, busy_text: str):
        self.caps = caps
        self.reports = Reports()
        self._open: set[Connection] = set()
        # Connections waiting for a request, longest waiting first (dicts keep order).
        self._idle: dict[Connection, None] = {}
        body = busy_text.encode()
        self.busy_reply = (
            b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 5\r\n"
            b"Content-Type: text/plain; charset=utf-8\r\nConnection: close\r\n"
            + f"Content-Length: {len(body)}\r\n\r\n".encode()
            + body
        )

    @property
    def open(self) -> int:
        return len(self._open)

    def admit(self, connection: Connection) -> bool:
        if len(self._open) >= self.caps.connections:
            if not self._idle:
                self.reports.say(
                    "busy",
                    logging.WARNING,
                    "web board: %d connections busy; turned a new one away",
                    len(self._open),
                )
                return False
            oldest = next(iter(self._idle))
            self.lost(oldest)  # its slot is the new one's; its connection_lost follows
            oldest.force_close()
        self._open.add(connection)
        self._idle[connection] = None
        return True

    def lost(self, connection: Connection) -> None:
        self._open.discard(connection)
        self._idle.pop(connection, None)

    def busy(self, connection: Connection) -> None:
        self._idle.pop(connection, None)

    def idle(self, connection: Connection) -> None:
        if connection in self._open:
            self._idle.pop(connection, None)
            self._idle[connection] = None  # to the end: it waits from now

    @web.middleware
    async def middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        connection = request.protocol
        if isinstance(connection, Connection):
            self.busy(connection)  # idle again once its answer is written (finish_response)
        return await handler(request)

    def connection(self, server: web.Server, **handler_args: Any) -> Connection:
        """The protocol factory's product: aiohttp's handler, admitted by this gate."""
        return Connection(
            self, server, loop=asyncio.get_running_loop(), logger=QUIET, **handler_args
        )


class Connection(RequestHandler):
    """aiohttp's request handler, admitted by the gate and quiet about bad requests."""

    __slots__ = ("_gate", "_admitted", "_on_lost")

    def __init__(self, gate: Gate, server: web.Server, **handler_args: Any):
        super().__init__(server, **handler_args)
        self._gate = gate
        self._admitted = False
        self._on_lost: list[Callable[[], None]] = []

    def on_lost(self, callback: Callable[[], None]) -> None:
        """Call `callback` as soon as the peer is gone (a live page closed): at once if
        it has gone already."""
        if self._admitted:
            self._on_lost.append(callback)
        else:
            callback()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        if not self._gate.admit(self):
            assert isinstance(transport, asyncio.Transport)
            transport.write(self._gate.busy_reply)
            transport.close()
            return
        self._admitted = True
        super().connection_made(transport)

    def connection_lost(self, exc: BaseException | None) -> None:
        if not self._admitted:
            return
        self._admitted = False
        self._gate.lost(self)
        callbacks, self._on_lost = self._on_lost, []
        try:
            super().connection_lost(exc)
        finally:
            for callback in callbacks:
                callback()

    async def finish_response(
        self, request: web.BaseRequest, resp: web.StreamResponse, start_time: float | None
    ) -> tuple[web.StreamResponse, bool]:
        try:
            return await super().finish_response(request, resp, start_time)
        finally:
            self._gate.idle(self)

    def log_exception(self, *args: Any, **kwargs: Any) -> None:
        error = kwargs.get("exc_info")
        peer = _peer(self.peername)
        if isinstance(error, HttpProcessingError):
            # Its text holds the request's bytes, a token among them: only its kind.
            self._gate.reports.say(
                "bad request",
                logging.WARNING,
                "web board: bad request from %s: %s",
                peer,
                type(error).__name__,
            )
            return
        # A fault of ours (a handler that raised): its traceback, but not one per request.
        self._gate.reports.say(
            "failed",
            logging.ERROR,
            "web board: a request from %s failed",
            peer,
            exc_info=error if isinstance(error, BaseException) else None,
        )


class GuardedSite(web.BaseSite):
    """A TCP site whose connections pass the gate.

    asyncio accepts up to `backlog` connections in one go, each a descriptor before the
    gate sees it, and uses the same number for the kernel's queue of connections not yet
    accepted. The first stays small (Caps.accept_batch); the queue, which costs the
    process nothing, is made LISTEN_QUEUE long, so a burst waits there, not for the
    kernel's retransmits of dropped handshakes (seconds).
    """

    def __init__(
        self, runner: web.BaseRunner, host: str, port: int, gate: Gate, **handler_args: Any
    ):
        super().__init__(runner, backlog=gate.caps.accept_batch)
        self._host = host
        self._port = port
        self._gate = gate
        self._handler_args = handler_args

    @property
    def name(self) -> str:
        return f"http://{self._host}:{self._port}"

    async def start(self) -> None:
        await super().start()
        server = self._runner.server
        assert server is not None
        self._server = await asyncio.get_running_loop().create_server(
            lambda: self._gate.connection(server, **self._handler_args),
            self._host,
            self._port,
            backlog=self._gate.caps.accept_batch,
        )
        for listening in self._server.sockets:
            with listening.dup() as same:  # the same socket, so the same queue
                same.listen(LISTEN_QUEUE)


class AcceptFailures(logging.Filter):
    """asyncio logs a traceback per failed accept(), up to a backlog's worth a second:
    with no descriptor left, one short line every REPORT_EVERY_S instead."""

    def __init__(self, reports: Reports):
        super().__init__()
        self._reports = reports

    def filter(self, record: logging.LogRecord) -> bool:
        if not str(record.msg).startswith(ACCEPT_FAILED):
            return True
        held = self._reports.due("accept")
        if held is None:
            return False
        error = record.exc_info[1] if record.exc_info else None
        # getattr: an OSError says why in strerror; another exception does not
        reason = getattr(error, "strerror", None) or "out of resources"
        record.msg = "web board: cannot accept a connection: %s; trying again in a second%s"
        record.args = (reason, f" ({held} more since the last such line)" if held else "")
        record.exc_info = None
        record.exc_text = None
        return True
