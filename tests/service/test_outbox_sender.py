"""The outbox sender with a scripted transport (unit level; the real servers are in
tests/integration/test_outbox.py)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from chatbot.notify.outbox import OutboxSender
from chatbot.store import Store
from chatbot.store import chat as chat_store
from chatbot.transports.base import (
    NotConnected,
    Original,
    Outgoing,
    Target,
    TargetUnavailable,
    Transport,
    TransportError,
)


class ScriptedTransport(Transport):
    name = "xmpp"

    def __init__(
        self,
        refuse_rooms: set[str] = frozenset(),
        refuse_texts: set[str] = frozenset(),
        fail_once: set[str] = frozenset(),
    ) -> None:
        super().__init__()
        self.refuse_rooms = set(refuse_rooms)
        self.refuse_texts = set(refuse_texts)
        # Texts whose first try fails (a stream that died under it), the next one goes.
        self.fail_once = set(fail_once)
        # text -> the message it was sent as an edit of (None: a new message)
        self.replaced: dict[str, Original | None] = {}
        self.tries: list[str] = []
        self.sent: list[tuple[str, str, str | None, str | None]] = []
        self.disconnect_next = False
        self.delivered = asyncio.Event()
        self.mentions: list[tuple[str, ...]] = []

    async def start(self) -> None:
        await self._set_online(True)

    async def stop(self) -> None:
        await self._set_online(False)

    async def _send_text(self, message: Outgoing) -> str:
        target, text, reply_to, txn_id = (
            message.target,
            message.text,
            message.reply_to,
            message.txn_id,
        )
        self.mentions.append(message.mentions)
        if self.disconnect_next:
            self.disconnect_next = False
            await self._set_online(False)
            raise NotConnected("gone")
        self.tries.append(text)
        if target.id in self.refuse_rooms:
            raise TargetUnavailable(f"forbidden in {target.id}")
        if text in self.refuse_texts:
            raise TransportError(f"server closed the stream over {text!r}")
        if text in self.fail_once:
            self.fail_once.discard(text)
            raise TransportError(f"no confirmation for {text!r}")
        self.sent.append((target.id, text, reply_to, txn_id))
        self.replaced[text] = message.replaces
        self.delivered.set()
        return f"id-{len(self.sent)}"

    async def react(self, target: Target, message_id: str, key: str) -> None:
        return None


@pytest.fixture
async def store(tmp_path: Path):
    opened = await Store.open(tmp_path / "b.sqlite3")
    yield opened
    await opened.close()


async def post(store: Store, room: str, text: str, **extra) -> int:
    async with store.transaction() as db:
        return await chat_store.enqueue(db, chat_store.Post("xmpp", room, text, **extra))


async def test_rows_go_out_in_order_once_and_are_remembered(store: Store) -> None:
    transport = ScriptedTransport()
    await transport.start()
    sender = OutboxSender(store, {"xmpp": transport})
    for n in range(3):
        await post(store, "room@muc", f"m{n}", reply_to="cmd-1" if n == 0 else None, card_id=None)
    await sender.flush()
    await sender.flush()  # nothing is sent twice
    assert [s[1] for s in transport.sent] == ["m0", "m1", "m2"]
    assert transport.sent[0][2] == "cmd-1"
    assert len({s[3] for s in transport.sent}) == 3  # each row its own stable txn id
    assert await chat_store.pending(store.reader, "xmpp") == []
    posted = await chat_store.posted(store.reader, "xmpp", "id-2")
    assert posted is not None and posted.room == "room@muc"


async def test_who_a_row_mentions_survives_the_outbox(store: Store) -> None:
    transport = ScriptedTransport()
    await transport.start()
    await post(store, "room@muc", "which?", purpose="question", mentions=("o@x", "p@x"))
    await post(store, "room@muc", "a notice")
    await OutboxSender(store, {"xmpp": transport}).flush()
    assert transport.mentions == [("o@x", "p@x"), ()]


async def test_a_refusing_room_waits_and_others_go_on(store: Store, caplog) -> None:
    transport = ScriptedTransport(refuse_rooms={"locked@muc"})
    await transport.start()
    sender = OutboxSender(store, {"xmpp": transport}, retry_initial=60)
    first = await post(store, "locked@muc", "a")
    await post(store, "locked@muc", "b")
    await post(store, "open@muc", "c")
    retry_at = await sender.flush()
    assert [s[1] for s in transport.sent] == ["c"]
    assert retry_at is not None
    assert "cannot post to xmpp room locked@muc" in caplog.text
    waiting = await chat_store.waiting(store.reader)
    assert waiting[0][:3] == ("xmpp", "locked@muc", 2) and "forbidden" in waiting[0][3]
    # Still held: a second flush does not hammer the room, and order is kept.
    await sender.flush()
    assert [s[1] for s in transport.sent] == ["c"]
    transport.refuse_rooms.clear()
    sender._held.clear()  # the back-off ran out
    await sender.flush()
    assert [s[1] for s in transport.sent] == ["c", "a", "b"]
    row = await store.reader.fetchone("SELECT attempts, state FROM outbox WHERE id = ?", (first,))
    # A room that took nothing is no fault of the row: only the successful try counts.
    assert row["state"] == "sent" and row["attempts"] == 1


async def test_a_message_that_fails_itself_waits_alone_then_fails_with_its_reason(
    store: Store, caplog
) -> None:
    transport = ScriptedTransport(refuse_texts={"poison"})
    await transport.start()
    sender = OutboxSender(store, {"xmpp": transport}, retry_initial=0, max_tries=3)
    bad = await post(store, "room@muc", "poison")
    await post(store, "room@muc", "after")
    await sender.flush()
    # The refused row does not hold the room: the one behind it went out.
    assert [s[1] for s in transport.sent] == ["after"]
    for _ in range(5):
        await sender.flush()
    assert transport.tries.count("poison") == 3  # bounded, then given up
    row = await store.reader.fetchone(
        "SELECT state, attempts, last_error FROM outbox WHERE id = ?", (bad,)
    )
    assert row["state"] == "failed" and row["attempts"] == 3
    assert "server closed the stream" in row["last_error"]
    assert sender.failed == 1 and await chat_store.pending(store.reader, "xmpp") == []
    assert "gave up on outbox row" in caplog.text
    failed = await chat_store.failed(store.reader, since=0)
    assert failed[0][:3] == ("xmpp", "room@muc", 1)


async def test_a_failed_direct_message_is_logged_as_a_direct_chat(store: Store, caplog) -> None:
    transport = ScriptedTransport(refuse_texts={"hello"})
    await transport.start()
    sender = OutboxSender(store, {"xmpp": transport})
    await post(store, "owner@localhost", "hello", target_kind="person")
    await sender.flush()
    assert "cannot post to xmpp direct chat with owner@localhost" in caplog.text
    assert "room owner@localhost" not in caplog.text


async def test_rows_wait_while_offline_and_go_when_back(store: Store) -> None:
    transport = ScriptedTransport()
    await transport.start()
    sender = OutboxSender(store, {"xmpp": transport})
    stop = asyncio.Event()
    running = asyncio.create_task(sender.run(stop))
    transport.disconnect_next = True
    await post(store, "room@muc", "while away")
    sender.wake()
    await asyncio.wait_for(transport.wait_offline(), 2)
    assert transport.sent == []
    assert len(await chat_store.pending(store.reader, "xmpp")) == 1
    await transport.start()  # back online: the status callback wakes the sender
    await asyncio.wait_for(transport.delivered.wait(), 2)
    assert [s[1] for s in transport.sent] == ["while away"]
    stop.set()
    await running


async def test_an_edit_waits_for_its_original_and_the_room_waits_behind_it(store: Store) -> None:
    # A run's status message, its last edit, then the next notice, in one room. The
    # status message's first try fails: its edit cannot go before it (it needs the
    # server's id), and nothing later in that room may overtake the edit.
    transport = ScriptedTransport(fail_once={"▶️ builder run started"})
    await transport.start()
    sender = OutboxSender(store, {"xmpp": transport}, retry_initial=0)
    status = await post(store, "room@muc", "▶️ builder run started")
    await post(store, "room@muc", "⏹ builder run ok", replaces_id=status)
    await post(store, "room@muc", "🔨 committed")
    await post(store, "other@muc", "elsewhere")

    await sender.flush()
    assert [s[1] for s in transport.sent] == ["elsewhere"]  # another room goes on
    assert len(await chat_store.pending(store.reader, "xmpp")) == 3

    await sender.flush()  # the status message's retry is due
    assert [s[1] for s in transport.sent] == [
        "elsewhere",
        "▶️ builder run started",
        "⏹ builder run ok",
        "🔨 committed",
    ]
    original = await chat_store.row(store.reader, status)
    assert original is not None and original.state == "sent"
    assert transport.replaced["⏹ builder run ok"] == Original(original.message_id, original.txn_id)
    assert transport.replaced["🔨 committed"] is None
    assert await chat_store.pending(store.reader, "xmpp") == []


async def test_an_edit_that_fails_itself_waits_alone_and_only_its_newest_text_goes(
    store: Store,
) -> None:
    transport = ScriptedTransport(fail_once={"⏳ builder: 1m"})
    await transport.start()
    sender = OutboxSender(store, {"xmpp": transport}, retry_initial=60)
    status = await post(store, "room@muc", "▶️ builder run started")
    await post(store, "room@muc", "⏳ builder: 1m", replaces_id=status)
    await post(store, "room@muc", "❓ which greeting?")
    await sender.flush()
    # The edit waits for its back-off; the rows behind it go on, in their order.
    assert [s[1] for s in transport.sent] == ["▶️ builder run started", "❓ which greeting?"]

    # A newer text of the same message replaces the edit that waits: only it is sent.
    await post(store, "room@muc", "⏹ builder run ok", replaces_id=status)
    await post(store, "room@muc", "🔨 committed")
    await sender.flush()
    assert [s[1] for s in transport.sent][2:] == ["⏹ builder run ok", "🔨 committed"]
    assert transport.tries.count("⏳ builder: 1m") == 1
    original = await chat_store.row(store.reader, status)
    assert transport.replaced["⏹ builder run ok"] == Original(original.message_id, original.txn_id)
    assert await chat_store.pending(store.reader, "xmpp") == []


async def test_an_edit_of_a_message_given_up_fails_and_holds_nothing(store: Store) -> None:
    transport = ScriptedTransport(refuse_texts={"▶️ builder run started"})
    await transport.start()
    sender = OutboxSender(store, {"xmpp": transport}, retry_initial=0, max_tries=2)
    status = await post(store, "room@muc", "▶️ builder run started")
    edit = await post(store, "room@muc", "⏹ builder run ok", replaces_id=status)
    await post(store, "room@muc", "🔨 committed")
    for _ in range(3):
        await sender.flush()
    assert [s[1] for s in transport.sent] == ["🔨 committed"]
    row = await chat_store.row(store.reader, edit)
    assert row is not None and row.state == "failed"
    assert row.last_error == "the message it edits was not sent"


class GatedTransport(ScriptedTransport):
    """Holds the send of one text until the test lets it go: a slow server, under load."""

    def __init__(self, held: str) -> None:
        super().__init__()
        self.held = held
        self.sending = asyncio.Event()
        self.release = asyncio.Event()

    async def _send_text(self, message: Outgoing) -> str:
        if message.text == self.held:
            self.sending.set()
            await self.release.wait()
        return await super()._send_text(message)


async def test_an_edit_superseded_while_it_goes_out_leaves_the_newer_one_to_send(
    store: Store,
) -> None:
    # Found in a fresh-clone run under load: a run's last status edit was recorded as
    # sent with the event of the edit before it, and never went out. The older edit was
    # on its way when the newer one deleted it, and SQLite gave the newer one its id.
    transport = GatedTransport(held="⏳ builder: 3s")
    await transport.start()
    sender = OutboxSender(store, {"xmpp": transport})
    status = await post(store, "room@muc", "▶️ builder run started")
    await sender.flush()
    older = await post(store, "room@muc", "⏳ builder: 3s", replaces_id=status)
    flushing = asyncio.create_task(sender.flush())
    await asyncio.wait_for(transport.sending.wait(), 5)
    newer = await post(store, "room@muc", "⏹ builder run ok", replaces_id=status)
    assert newer == older  # the id came round again: what this test is about
    transport.release.set()
    await flushing
    row = await chat_store.row(store.reader, newer)
    assert row is not None and row.text == "⏹ builder run ok"
    assert row.state == "pending" and row.message_id is None  # not the older one's send

    await sender.flush()
    assert [s[1] for s in transport.sent] == [
        "▶️ builder run started",
        "⏳ builder: 3s",
        "⏹ builder run ok",
    ]
    row = await chat_store.row(store.reader, newer)
    assert row is not None and row.state == "sent" and row.message_id == "id-3"
    assert await chat_store.posted(store.reader, "xmpp", "id-3") is not None


async def test_a_superseded_edit_leaves_no_retry_behind(store: Store) -> None:
    # The edit that failed waited for its next try; a newer text took its place. Had its
    # try time stayed, the sender would wake for it for good once that time passed.
    transport = ScriptedTransport(fail_once={"⏳ builder: 1m"})
    await transport.start()
    sender = OutboxSender(store, {"xmpp": transport}, retry_initial=60)
    status = await post(store, "room@muc", "▶️ builder run started")
    await post(store, "room@muc", "⏳ builder: 1m", replaces_id=status)
    assert await sender.flush() is not None  # the failed edit's next try
    await post(store, "room@muc", "⏹ builder run ok", replaces_id=status)
    await sender.flush()
    assert [s[1] for s in transport.sent] == ["▶️ builder run started", "⏹ builder run ok"]
    assert await sender.flush() is None  # nothing waits, nothing to wake for
