"""Keeping one slixmpp session alive: connect, resume, re-establish, back off.

slixmpp connects once and retries a failed *connection attempt* on its own
schedule (up to 300 s apart), but after a lost stream it does nothing. This
supervisor loop owns the connection instead: connect, wait for a session
(fresh, or resumed by XEP-0198), let the transport set up a fresh one (rooms),
ping while up, and after any loss wait a capped exponential back-off and
connect again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, cast

import slixmpp
from slixmpp import JID
from slixmpp.stanza import Message, Presence
from slixmpp.xmlstream import StanzaBase
from slixmpp.xmlstream.handler import Callback
from slixmpp.xmlstream.matcher import MatchXPath

from ..base import Backoff, redacting_repr

log = logging.getLogger(__name__)

PLUGINS = (
    "xep_0030",
    "xep_0045",
    "xep_0059",
    "xep_0066",
    "xep_0313",
    "xep_0198",
    "xep_0199",
    "xep_0203",
    "xep_0280",
    "xep_0308",
    "xep_0334",
    "xep_0359",
    "xep_0363",
    "xep_0428",
    "xep_0444",
    "xep_0461",
)


@dataclass(frozen=True, repr=False)
class XmppSettings:
    jid: str
    password: str
    #: None: look the server up through DNS SRV for the JID's domain.
    host: str | None = None
    port: int = 5222
    rooms: tuple[str, ...] = ()
    nick: str = "bot"
    #: "none" only for a server on loopback (tests); the network is plain TCP then.
    tls: Literal["starttls", "direct", "none"] = "starttls"
    ca_certs: str | None = None
    reconnect_initial: float = 1.0
    reconnect_max: float = 60.0
    ping_interval: float = 60.0
    ping_timeout: float = 20.0
    #: How long send() waits for the server to confirm (room echo or SM ack).
    send_timeout: float = 10.0
    join_timeout: float = 20.0
    #: Room history stanzas requested on join; they are never commands anyway.
    join_history: int = 0
    #: Largest stanza the bot sends; longer text is cut to fit. RFC 6120 lets a
    #: server refuse anything over 10,000 bytes, and a refused stanza costs the stream.
    max_stanza_bytes: int = 10_000
    #: Hosts ("host", "host:port") whose file links are fetched, at any address; empty:
    #: any host of `file_domains` (and the bot's own domain), at public addresses only.
    upload_hosts: tuple[str, ...] = ()
    #: The owners' domains: their clients upload to their own servers.
    file_domains: tuple[str, ...] = ()

    def __repr__(self) -> str:
        return redacting_repr(self, ("password",))


def make_client(settings: XmppSettings, *, resource: str | None = None) -> slixmpp.ClientXMPP:
    jid = JID(settings.jid)
    if resource:
        jid.resource = resource
    client = slixmpp.ClientXMPP(jid, settings.password)
    for name in PLUGINS:
        client.register_plugin(name)
    client.enable_direct_tls = settings.tls == "direct"
    client.enable_starttls = settings.tls == "starttls"
    client.enable_plaintext = settings.tls == "none"
    if settings.tls == "none":
        client.plugin["feature_mechanisms"].unencrypted_scram = True
    if settings.ca_certs:
        client.ca_certs = Path(settings.ca_certs)  # slixmpp turns a str into a Path itself
    return client


def login_failure(client: slixmpp.ClientXMPP, settings: XmppSettings) -> str:
    """Why the server did not let us log in, in words that point at the fix."""
    secure = "starttls" in client.features or isinstance(
        client.socket, ssl.SSLSocket | ssl.SSLObject
    )
    if not secure and settings.tls != "none":
        # slixmpp never offers the password over a plain stream; it reports that
        # as a failed login, which is not what happened.
        return (
            f"the server at {settings.host or client.boundjid.domain} offered no TLS, so the "
            'password was not sent; enable TLS on the server (set xmpp.tls = "none" only '
            "for a server on the same machine)"
        )
    return f"login as {settings.jid} refused; check the password"


def connect(client: slixmpp.ClientXMPP, settings: XmppSettings) -> None:
    if settings.host:
        client.connect(settings.host, settings.port)
    else:
        client.connect()


class XmppConnection:
    """The supervisor loop around one client; the transport hears about sessions."""

    def __init__(
        self,
        settings: XmppSettings,
        *,
        on_fresh_session: Callable[[], Awaitable[None]],
        on_online: Callable[[bool], Awaitable[None]],
        on_session_end: Callable[[], None],
    ) -> None:
        self.settings = settings
        self.client = client = make_client(settings)
        #: Fresh sessions so far (a resume does not count).
        self.sessions = 0
        self.auth_failed = False
        self._on_fresh_session = on_fresh_session
        self._on_online = on_online
        self._stopping = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._session: asyncio.Future[str] | None = None
        self._lost: asyncio.Future[str] | None = None
        self._presence_echo: asyncio.Future[str] | None = None
        client.add_event_handler("session_start", lambda _: _settle(self._session, "fresh"))
        client.add_event_handler("session_resumed", lambda _: _settle(self._session, "resumed"))
        client.add_event_handler("disconnected", lambda e: _settle(self._lost, str(e)))
        client.add_event_handler("connection_failed", self._on_connection_failed)
        client.add_event_handler("failed_all_auth", self._on_auth_failed)
        # Resume refused: the old stream's unacked stanzas are gone for good.
        client.add_event_handler("session_end", lambda _: on_session_end())
        client.register_handler(
            Callback(
                "chatbot own presence",
                MatchXPath("{jabber:client}presence"),
                handles(self._on_presence),
            )
        )

    def start(self) -> None:
        self._stopping.clear()
        self._task = asyncio.create_task(self._supervise(), name="xmpp-supervisor")

    async def stop(self) -> None:
        self._stopping.set()
        await shutdown(self.client)
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
            self._task = None

    def _on_connection_failed(self, error: object) -> None:
        log.warning("XMPP connection to %s failed: %s", self.settings.host or "SRV", error)
        self.client.cancel_connection_attempt()  # our back-off, not slixmpp's
        _settle(self._lost, f"connection failed: {error}")

    def _on_auth_failed(self, _: object) -> None:
        # The stream closes next, which settles the round through "disconnected".
        log.error("XMPP: %s", login_failure(self.client, self.settings))
        self.auth_failed = True

    def _on_presence(self, pres: Presence) -> None:
        if pres["from"] == self.client.boundjid:
            _settle(self._presence_echo, "seen")

    async def _supervise(self) -> None:
        backoff = Backoff(self.settings.reconnect_initial, self.settings.reconnect_max)
        loop = asyncio.get_running_loop()
        while not self._stopping.is_set():
            session = self._session = loop.create_future()
            lost = self._lost = loop.create_future()
            connect(self.client, self.settings)
            await asyncio.wait([session, lost], return_when=asyncio.FIRST_COMPLETED)
            if session.done() and not lost.done():
                backoff.reset()
                if session.result() == "fresh":
                    self.sessions += 1
                    await self._announce(lost)
                    setup = asyncio.ensure_future(self._on_fresh_session())
                    await asyncio.wait([setup, lost], return_when=asyncio.FIRST_COMPLETED)
                    setup.cancel()
                if not lost.done():
                    await self._on_online(True)
                    await self._keepalive(lost)
            reason = lost.result() if lost.done() else "?"
            await self._on_online(False)
            if self._stopping.is_set():
                break
            delay = backoff.next_delay()
            log.warning("XMPP connection lost (%s); reconnecting in %.2fs", reason, delay)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), delay)

    async def _announce(self, lost: asyncio.Future[str]) -> None:
        """Send initial presence and wait until the server echoes it.

        Until the server has it, a message to our bare JID is not routed to
        this session (it could go to a stale one, or bounce); being online
        before that would lose the first direct message.
        """
        echo = self._presence_echo = asyncio.get_running_loop().create_future()
        self.client.send_presence()
        await asyncio.wait(
            [echo, lost], timeout=self.settings.join_timeout, return_when=asyncio.FIRST_COMPLETED
        )

    async def _keepalive(self, lost: asyncio.Future[str]) -> None:
        """Ping the server while connected; a silent dead link becomes a lost one."""
        while not lost.done():
            done, _ = await asyncio.wait([lost], timeout=self.settings.ping_interval)
            if done:
                return
            try:
                await self.client.plugin["xep_0199"].ping(timeout=self.settings.ping_timeout)
            except Exception as exc:  # noqa: BLE001 - any failure means the link is gone
                log.warning("XMPP ping failed (%s); dropping the connection", exc)
                self.client.abort()
                _settle(lost, "ping failed")


async def shutdown(client: slixmpp.ClientXMPP) -> None:
    """Close the stream and end the client's send task.

    slixmpp only cancels that task in `__del__`, too late to run, which leaves
    "Task was destroyed but it is pending" in the log at every stop.
    """
    client.cancel_connection_attempt()
    if client.transport is not None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(client.disconnect(wait=1), 3)
    # getattr: slixmpp's private sender task, absent before the first connection
    sender = getattr(client, "_run_out_filters", None)
    if sender is not None and not sender.done():
        sender.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await sender


def handles(
    handler: Callable[[Message], object] | Callable[[Presence], object],
) -> Callable[[StanzaBase], Any]:
    """A handler for slixmpp's Callback, which is typed for any stanza: its MatchXPath
    lets through only the kind of stanza the handler takes."""
    return cast("Callable[[StanzaBase], Any]", handler)


def _settle(fut: asyncio.Future[str] | None, value: str) -> None:
    if fut is not None and not fut.done():
        fut.set_result(value)
