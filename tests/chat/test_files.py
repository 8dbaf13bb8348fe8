"""Files people send in chat: what they attach to, and every way one is refused (issue 36).

The transports' own tests show the bytes arriving over real Prosody and Synapse; here
an `IncomingFile` carries a fetch that hands the bytes over (or fails the way a
transport's fetch fails), so each rule of the chat side is shown on its own: who may
send, what a file attaches to, and that one failed file stops the whole message.
"""

from __future__ import annotations

import io
from collections.abc import Awaitable, Callable

from chatbot.domain.phases import Phase
from chatbot.notify.outbox import OutboxSender
from chatbot.store import jobs as job_store
from chatbot.store import talk as talk_store
from chatbot.store.chat import Post
from chatbot.transports.base import Envelope, FilesNotSupported, Identity, IncomingMessage
from chatbot.transports.console import ConsoleSettings, ConsoleTransport
from chatbot.transports.files import FileTooLarge, IncomingFile
from tests.media.made import png

from .conftest import OWNER, REQUESTER, STRANGER, Env, dm, msg

ELF = b"\x7fELF\x02\x01\x01\x00" + b"\x00" * 200


def served(data: bytes, calls: list[int] | None = None) -> Callable[[int], Awaitable[bytes]]:
    async def fetch(limit: int) -> bytes:
        if calls is not None:
            calls.append(limit)
        if len(data) > limit:
            raise FileTooLarge(limit, len(data))
        return data

    return fetch


def never() -> Callable[[int], Awaitable[bytes]]:
    async def fetch(limit: int) -> bytes:
        raise AssertionError("a file was fetched that must not be")

    return fetch


def with_file(
    event: IncomingMessage,
    data: bytes = b"",
    *,
    name: str = "screenshot.png",
    fetch: Callable[[int], Awaitable[bytes]] | None = None,
    voice: bool = False,
) -> IncomingMessage:
    file = IncomingFile(
        name=name,
        declared_type="image/png",
        declared_size=len(data),
        voice=voice,
        source="https://upload.example.org/x",
        fetch=fetch or served(data),
    )
    return IncomingMessage(
        envelope=event.envelope, text=event.text, reply_to=event.reply_to, files=(file,)
    )


async def _kept(env: Env) -> list[dict]:
    rows = await env.store.reader.fetchall("SELECT * FROM attachments ORDER BY id")
    return [dict(row) for row in rows]


# --- where a file goes ---------------------------------------------------------------


async def test_a_file_alone_in_a_direct_chat_waits_for_attach(env: Env) -> None:
    await env.card("login")
    row = await env.one(with_file(dm(""), png()))
    assert "📎 Got screenshot.png" in row.text and "/attach <slug>" in row.text
    assert [r["card_id"] for r in await _kept(env)] == [None]
    row = await env.one(dm("/attach login"))
    assert "📎 login: attached screenshot.png" in row.text
    files = await env.board.files.of_card("login")
    assert [(f.name, str(f.kind), f.content_type) for f in files] == [
        ("screenshot.png", "image", "image/png")
    ]


async def test_a_file_sent_as_a_reply_to_a_cards_message_is_for_that_card(env: Env) -> None:
    card = await env.card("login")
    await env.posted("bot-card-1", card_id=card.id, purpose="notice")
    row = await env.one(with_file(msg("", reply_to="bot-card-1"), png()))
    assert "login: attached screenshot.png" in row.text
    assert len(await env.board.files.of_card("login")) == 1


async def test_a_draft_with_a_picture_gets_it_in_its_own_transaction(env: Env) -> None:
    row = await env.one(with_file(msg("/draft the login button is red"), png()))
    assert "With screenshot.png" in row.text
    (slug,) = await env.board.reads.slugs()
    files = await env.board.files.of_card(slug)
    assert [str(f.purpose) for f in files] == ["draft"]


async def test_a_file_as_the_answer_to_a_question(env: Env) -> None:
    await env.card("login", Phase.NEEDS_HUMAN)
    question = await env.ask("login", "Which colour?", message_id="bot-q")
    await env.said(with_file(msg("", reply_to="bot-q"), png()))
    fresh = await env.board.reads.question(question.id)
    assert fresh is not None and fresh.state == "answered"
    files = await env.board.files.of_card("login")
    assert [(str(f.purpose), f.question_id) for f in files] == [("answer", question.id)]


async def test_a_steer_with_a_picture_is_a_talk_row_with_its_file(env: Env) -> None:
    card = await env.card("login", Phase.BUILDING)
    async with env.store.transaction() as db:
        await job_store.enqueue(db, kind="builder", lane="light", card_id=card.id)
        job = await job_store.claim(db, "light", "worker-1", 60.0)
        assert job is not None
        await talk_store.set_talks(db, job.id, True)
    row = await env.one(with_file(msg("/steer login look at this"), png()))
    assert "sent to the builder" in row.text
    talk = await env.board.talk.inbox([job.id])
    assert [t.text for t in talk] == ["look at this"]
    files = await env.board.files.of_talk(talk[0].id)
    assert [f.name for f in files] == ["screenshot.png"]


async def test_a_caption_command_that_names_a_card_attaches_first(env: Env) -> None:
    await env.card("login")
    rows = await env.said(with_file(msg("/status login"), png()))
    assert any("login: attached" in r.text for r in rows)
    assert len(await env.board.files.of_card("login")) == 1


# --- who may send ------------------------------------------------------------------


async def test_a_strangers_file_is_never_fetched_nor_kept(env: Env) -> None:
    await env.card("login")
    await env.said(with_file(dm("", sender=STRANGER), fetch=never()))
    await env.said(with_file(msg("/attach login", STRANGER), fetch=never()))
    assert await _kept(env) == []


async def test_a_requesters_file_waits_with_the_request_and_goes_with_its_acceptance(
    env: Env,
) -> None:
    await env.card("login")
    row = await env.one(with_file(msg("/attach login", REQUESTER), png()))
    assert "With screenshot.png" in row.text
    assert await env.board.files.of_card("login") == []
    await env.sent(row, "bot-request")
    await env.said(msg("yes", reply_to="bot-request"))
    assert [f.name for f in await env.board.files.of_card("login")] == ["screenshot.png"]


# --- refusals: nothing else happens -------------------------------------------------


async def test_an_oversized_file_stops_the_message(env: Env) -> None:
    calls: list[int] = []
    big = b"\x89PNG" + b"\x00" * (21 * 1024 * 1024)
    row = await env.one(with_file(msg("/draft the login"), big, fetch=served(big, calls)))
    assert "was not taken" in row.text and "limit" in row.text
    assert calls == [20 * 1024 * 1024]
    assert await env.board.reads.slugs() == []


async def test_an_executable_named_png_is_refused_by_what_its_bytes_are(env: Env) -> None:
    await env.card("login")
    row = await env.one(with_file(msg("/attach login"), ELF))
    assert "was not taken" in row.text and "executable" in row.text.lower()
    assert await env.board.files.of_card("login") == []


# --- voice ------------------------------------------------------------------------


async def test_without_transcription_a_voice_note_says_how_to_turn_it_on(env: Env) -> None:
    row = await env.one(with_file(dm(""), b"OggS", name="voice.ogg", voice=True, fetch=never()))
    assert "[transcription]" in row.text


# --- out: the outbox sends a row's file -----------------------------------------------


async def test_the_outbox_sends_a_rows_file_with_its_text_as_caption(env: Env, tmp_path) -> None:

    console = ConsoleTransport(
        ConsoleSettings(owner="alice", files_dir=tmp_path / "sent"), output=io.StringIO()
    )
    await console.start()
    kept = await env.board.files.keep_outgoing(
        b"diff --git a b\n", name="x.patch", content_type="text/x-diff"
    )
    post = Post(
        transport="console",
        target="alice",
        target_kind="person",
        text="📎 the change",
        attachment_id=kept.id,
    )
    await env.board.post_alone(post)
    sender = OutboxSender(env.store, {"console": console}, files=env.board.files)
    await sender.flush()
    said = await console.pop()
    assert said.text == "📎 the change" and said.file is not None
    assert said.file.data == b"diff --git a b\n" and said.file.name == "x.patch"
    written = list((tmp_path / "sent").iterdir())
    assert [p.read_bytes() for p in written] == [b"diff --git a b\n"]
    assert oct(written[0].stat().st_mode & 0o777) == "0o600"


async def test_a_file_a_network_cannot_take_goes_as_its_text_and_why(env: Env) -> None:

    class NoUploads(ConsoleTransport):
        async def _send_file(self, message, file):  # type: ignore[no-untyped-def, override]
            raise FilesNotSupported("the XMPP server offers no file upload service (XEP-0363)")

    console = NoUploads(ConsoleSettings(owner="alice"), output=io.StringIO())
    await console.start()
    kept = await env.board.files.keep_outgoing(b"log\n", name="l.txt", content_type="text/plain")
    await env.board.post_alone(
        Post(
            transport="console",
            target="alice",
            target_kind="person",
            text="📎 its log",
            attachment_id=kept.id,
        )
    )
    sender = OutboxSender(env.store, {"console": console}, files=env.board.files)
    await sender.flush()
    said = await console.pop()
    assert said.text.startswith("📎 its log\n(The file could not be sent: the XMPP server")
    rows = await env.outbox()
    assert rows[-1].state == "sent"


async def test_attach_without_files_names_the_way_on_for_the_network(env: Env) -> None:
    await env.card("login")
    unknown = await env.one(msg("/attach nosuch"))
    assert "There is no card 'nosuch'" in unknown.text
    nothing = await env.one(msg("/attach login"))
    assert "send the file first" in nothing.text
    console = Identity("console", "owner@example.org")
    typed = IncomingMessage(
        envelope=Envelope(chat=console, sender=OWNER, message_id="c-1", is_direct=True),
        text="/attach login",
    )
    row = await env.one(typed)
    assert row.text.startswith("Files cannot be sent from here")
