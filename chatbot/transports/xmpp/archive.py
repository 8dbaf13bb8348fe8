"""Reading XMPP archives (XEP-0313): catch up after a restart, find what we sent.

Two archives matter: our account's own (every direct message to or from the
bot) and each room's. After a fresh session the transport asks each for what
came after the last message it handled (its `Mark`), so commands sent while
the bot was down are run once; before sending a message again whose first
attempt may have arrived, the outbox asks whether the archive has it.

A query's results arrive as separate messages ahead of the answer to the
query. The transport hands every incoming message to `Archives.take` first,
which keeps those that answer one of our queries, and only from the archive
asked: anyone could send a message that looks like a result.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import uuid
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

import slixmpp
from slixmpp import JID
from slixmpp.exceptions import IqError, IqTimeout
from slixmpp.stanza import Message

from ..base import StateStore, TransportError
from . import stanzas as wire

log = logging.getLogger(__name__)

NS_RSM = "http://jabber.org/protocol/rsm"
#: Live stanzas of senders who do not count move an archive's mark at most this often.
MARK_EVERY_S = 1.0
#: At most this many messages of one archive are caught up after a restart (the newest).
CATCH_UP_LIMIT = 500
#: Archive pages read when looking for one message we sent.
FIND_PAGES = 10
PAGE = 50
# The mark's time comes from our clock, the archive's from the server's.
CLOCK_SLACK_S = 300.0
# Conditions that mean "this server keeps no such archive", not "try later".
_NO_ARCHIVE = {"feature-not-implemented", "service-unavailable", "not-allowed"}


class ArchiveError(TransportError):
    """The archive could not be asked (timeout, error): whether it holds something is unknown."""


class NoArchive(ArchiveError):
    """The server keeps no archive for this account or room."""


@dataclass(frozen=True)
class Mark:
    """Where handling stopped in one archive: the last message's id there, and when."""

    id: str | None
    at: float

    def dump(self) -> str:
        return json.dumps({"id": self.id, "at": self.at})

    @classmethod
    def load(cls, raw: str | None) -> Mark | None:
        try:
            data = json.loads(raw) if raw else None
            return cls(data.get("id"), float(data["at"])) if isinstance(data, dict) else None
        except (ValueError, KeyError, TypeError):
            return None


@dataclass(frozen=True)
class Page:
    #: Result messages, oldest first.
    results: list[Message]
    first: str | None
    last: str | None
    complete: bool


def result_id(result: Message) -> str | None:
    el = result.xml.find(f"{{{wire.NS_MAM}}}result")
    return el.get("id") if el is not None else None


class Archives:
    def __init__(
        self, client: Callable[[], slixmpp.ClientXMPP | None], own_bare: str, timeout: float
    ):
        self._client = client
        self.own_bare = own_bare
        self.timeout = timeout
        #: query id -> (archive asked, results so far)
        self._open: dict[str, tuple[str, list[Message]]] = {}

    def take(self, msg: Message) -> bool:
        """Keep `msg` if it is a result of one of our open queries; True if it was one."""
        el = msg.xml.find(f"{{{wire.NS_MAM}}}result")
        if el is None:
            return False
        query = self._open.get(el.get("queryid") or "")
        if query is None:
            return True  # a stale or foreign result: never a command either
        archive, results = query
        sender = msg["from"].bare
        if sender == archive or (archive == self.own_bare and sender == ""):
            results.append(msg)
        return True

    async def page(
        self,
        archive: str,
        *,
        start: datetime | None = None,
        with_jid: str | None = None,
        before: str | bool | None = None,
        after: str | None = None,
        size: int = PAGE,
    ) -> Page:
        client = self._client()
        if client is None:
            raise ArchiveError("XMPP is not connected")
        query_id = uuid.uuid4().hex
        iq = client.make_iq_set(ito=None if archive == self.own_bare else JID(archive))
        iq["mam"]["queryid"] = query_id
        if start is not None:
            iq["mam"]["start"] = start
        if with_jid:
            iq["mam"]["with"] = JID(with_jid)
        iq["mam"]["rsm"]["max"] = str(size)
        if before is not None:
            iq["mam"]["rsm"]["before"] = before
        if after is not None:
            iq["mam"]["rsm"]["after"] = after
        results: list[Message] = []
        self._open[query_id] = (archive, results)
        try:
            answer = await iq.send(timeout=self.timeout)  # type: ignore[no-untyped-call]  # slixmpp's Iq.send has no annotations
        except IqTimeout:
            raise ArchiveError(f"the archive of {archive} did not answer in time") from None
        except IqError as error:
            condition = error.iq["error"]["condition"]
            kind = NoArchive if condition in _NO_ARCHIVE else ArchiveError
            raise kind(f"the archive of {archive} refused the query: {condition}") from None
        finally:
            self._open.pop(query_id, None)
        fin = answer.xml.find(f"{{{wire.NS_MAM}}}fin")
        rsm = fin.find(f"{{{NS_RSM}}}set") if fin is not None else None

        def text(name: str) -> str | None:
            el = rsm.find(f"{{{NS_RSM}}}{name}") if rsm is not None else None
            return el.text if el is not None and el.text else None

        complete = fin is not None and fin.get("complete") in ("true", "1")
        return Page(results, text("first"), text("last"), complete)

    async def newest_id(self, archive: str) -> str | None:
        page = await self.page(archive, before=True, size=1)
        return result_id(page.results[-1]) if page.results else None

    async def since(self, archive: str, mark: Mark) -> tuple[list[Message], bool]:
        """What came after `mark`, oldest first: at most the newest CATCH_UP_LIMIT.

        Read backwards from the newest until the mark's message; True as second
        value when the limit cut older ones off.
        """
        start = datetime.fromtimestamp(mark.at - CLOCK_SLACK_S, UTC)
        collected: list[Message] = []
        cursor: str | bool = True
        while len(collected) < CATCH_UP_LIMIT:
            size = min(100, CATCH_UP_LIMIT - len(collected))
            page = await self.page(archive, start=start, before=cursor, size=size)
            ids = [result_id(r) for r in page.results]
            if mark.id is not None and mark.id in ids:
                return page.results[ids.index(mark.id) + 1 :] + collected, False
            collected = page.results + collected
            if page.complete or not page.first or not page.results:
                return collected, False
            cursor = page.first
        return collected, True

    async def find(
        self,
        archive: str,
        matches: Callable[[Message], bool],
        *,
        since: float,
        with_jid: str | None = None,
    ) -> Message | None:
        """The newest archived message after `since` for which `matches` is true, if any.

        Read from the newest back: what we look for was sent moments ago, and a
        busy room may have archived thousands of messages since `since`.
        """
        start = datetime.fromtimestamp(since - CLOCK_SLACK_S, UTC)
        cursor: str | bool = True
        for _ in range(FIND_PAGES):
            page = await self.page(archive, start=start, with_jid=with_jid, before=cursor)
            for result in reversed(page.results):
                if matches(result):
                    return result
            if page.complete or not page.first or not page.results:
                return None
            cursor = page.first
        return None


def inner(result: Message) -> Message | None:
    """The archived message inside a result."""
    el = result.xml.find(
        f"{{{wire.NS_MAM}}}result/{{{wire.NS_FORWARD}}}forwarded/{{jabber:client}}message"
    )
    return wire.message_of(el) if el is not None else None


def sent_by_us(result: Message, txn_id: str, own_bare: str, room_nick: str | None) -> bool:
    """An archived message of ours with origin-id `txn_id` (in a room when room_nick is set)."""
    sent = inner(result)
    if sent is None or wire.origin_id(sent) != txn_id:
        return False
    if room_nick is not None and wire.archived_sender(sent) == own_bare:
        return True
    frm: JID = sent["from"]
    return frm.resource == room_nick if room_nick is not None else frm.bare == own_bare


class CatchUp:
    """Reading the archives after a fresh session; live stanzas wait behind it.

    While any archive is being read (`hold`), live stanzas are kept back, and
    when the last read ends they follow what the archives returned, in order.
    A message seen both ways has one stanza-id and is handled once.
    """

    def __init__(
        self,
        archives: Archives,
        store: StateStore,
        ctx: wire.StanzaContext,
        queue: asyncio.Queue[wire.Parsed],
    ):
        self.archives = archives
        self.store = store
        self.ctx = ctx
        self.queue = queue
        self._holds: set[str] = set()
        self._caught_up: list[wire.Parsed] = []
        self._held: list[wire.Parsed] = []
        self._marked_at: dict[str, float] = {}

    def hold(self, reason: str, *, fresh: bool = False) -> None:
        if fresh and self._holds:
            self.release(*self._holds)  # a setup the lost session never finished
        self._holds.add(reason)

    def release(self, *reasons: str) -> None:
        self._holds.difference_update(reasons)
        if not self._holds:
            for parsed in self._caught_up + self._held:
                self.queue.put_nowait(parsed)
            self._caught_up.clear()
            self._held.clear()

    def accept(self, parsed: wire.Parsed) -> None:
        """A live stanza: to the pump now, or after the archives being read."""
        if self._holds:
            self._held.append(parsed)
        else:
            self.queue.put_nowait(parsed)

    async def read(self, where: str) -> None:
        """Queue what `where` archived after the last message handled from it."""
        key = f"xmpp:caught-up:{where}"
        mark = Mark.load(await self.store.get_value(key))
        try:
            if mark is None:
                # First start against this archive: what came before is not ours to run.
                newest = await self.archives.newest_id(where)
                await self.store.set_value(key, Mark(newest, time.time()).dump())
                return
            results, cut = await self.archives.since(where, mark)
        except NoArchive as error:
            log.warning("no catch-up for %s: %s (enable XEP-0313 on the server)", where, error)
            return
        except ArchiveError as error:
            log.warning("could not catch up on %s: %s", where, error)
            return
        if cut:
            log.warning(
                "over %d messages in %s since the last one handled; older ones skipped",
                CATCH_UP_LIMIT,
                where,
            )
        found = [parse_archived(result, where, self.ctx) for result in results]
        parsed = [p for p in found if isinstance(p, wire.Parsed)]
        self._caught_up.extend(parsed)
        log.info(
            "caught up on %s: %d of %d archived messages to handle",
            where,
            len(parsed),
            len(results),
        )

    async def mark(self, parsed: wire.Parsed, counts: bool) -> None:
        """Remember where a handled message sits in its archive, for the next catch-up."""
        if parsed.archived is None:
            return
        where, archive_id = parsed.archived
        now = time.time()
        if not counts and now - self._marked_at.get(where, 0.0) < MARK_EVERY_S:
            return  # a flood of strangers need not write a row each; a few replay later at most
        self._marked_at[where] = now
        await self.store.set_value(f"xmpp:caught-up:{where}", Mark(archive_id, now).dump())


def parse_archived(result: Message, archive: str, ctx: wire.StanzaContext) -> wire.Result:
    """A message read back from `archive` (our account's, or a room's) in a catch-up.

    The archive's result id is the message's stanza-id there (the same id the
    live copy carried), so a message seen live and again in the archive is one
    event. Any stanza-id the sender wrote in is dropped first.
    """
    res = result.xml.find(f"{{{wire.NS_MAM}}}result")
    fwd = res.find(f"{{{wire.NS_FORWARD}}}forwarded") if res is not None else None
    inner_xml = fwd.find("{jabber:client}message") if fwd is not None else None
    sid = res.get("id") if res is not None else None
    if res is None or fwd is None or inner_xml is None or not sid:
        return wire.Dropped("archive-empty")
    delay = fwd.find(f"{{{wire.NS_DELAY}}}delay")
    at = wire.parse_stamp(delay.get("stamp") if delay is not None else None)
    inner = wire.message_of(wire.copy_element(inner_xml))
    for el in inner.xml.findall(f"{{{wire.NS_SID}}}stanza-id"):
        inner.xml.remove(el)
    ET.SubElement(inner.xml, f"{{{wire.NS_SID}}}stanza-id", {"by": archive, "id": sid})
    if at is None:
        return wire.Dropped("archive-no-time")
    mtype = inner["type"]
    if mtype in ("error", "headline"):
        return wire.Dropped(mtype)
    if mtype == "groupchat":
        if inner["from"].bare != archive:
            return wire.Dropped("archive-foreign")
        return wire.parse_groupchat(inner, ctx, at=at)
    if archive != ctx.own_jid.bare:
        return wire.Dropped("archive-foreign")
    return wire.parse_direct(inner, ctx, carbon=False, at=at)
