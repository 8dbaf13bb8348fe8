"""Files people send and the bot sends: kept safely, tied to cards, listed.

A file is taken only as what its bytes are (file_kinds.py), within the size limit,
and kept content-addressed in the files folder (store/blobs.py) with a row that says
who sent it from where. Sent without naming its card it is loose and waits
`keep_loose` for /attach (or a steer, an answer, a draft); `attach_files` ties it to
its card with an event in the card's history.

All kept files share a quota. Before a new file would pass it, the files of finished
cards (and loose files nobody attached in time) are dropped, oldest first: the bytes
go when no row needs them any more, and the row stays with `gone_at`, so the card
still lists what it had. When that is not enough the file is refused with the way
forward.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from chatbot.board.errors import BoardError
from chatbot.board.file_kinds import DEFAULT_MAX_PIXELS, FileKind, NotTaken, Sniffed, identify
from chatbot.board.file_names import display_name, size_words
from chatbot.domain.phases import Phase
from chatbot.store import attachments as attachment_store
from chatbot.store import cards as card_store
from chatbot.store.attachments import AttachmentRow, NewAttachment
from chatbot.store.blobs import BlobDamaged, BlobMissing, BlobStore
from chatbot.store.db import Db, Store

log = logging.getLogger(__name__)

MB = 1024 * 1024
# Cards whose files the quota drops first: nothing will run on them again.
FINISHED = (Phase.DEPLOYED, Phase.DONE, Phase.ARCHIVED, Phase.RESEARCH_DONE)


class AttachPurpose(StrEnum):
    CARD = "card"
    STEER = "steer"
    ANSWER = "answer"
    DRAFT = "draft"
    OUTGOING = "outgoing"


# In a card's history: "attached screenshot.png (45 KB) with a steer".
_WITH = {
    AttachPurpose.STEER: " with a steer",
    AttachPurpose.ANSWER: " with an answer",
    AttachPurpose.DRAFT: " with the draft",
    AttachPurpose.OUTGOING: " (sent by the bot)",
}


@dataclass(frozen=True)
class Attachment:
    id: int
    sha256: str
    size: int
    content_type: str
    kind: FileKind
    name: str
    card_id: int | None
    #: '' while loose, else an AttachPurpose value.
    purpose: str
    question_id: int | None
    #: Who sent it ('' for the bot's own files).
    actor: str
    created_at: float
    #: It came from an end-to-end encrypted room.
    encrypted: bool
    #: The quota dropped its bytes; the row stays so the card says what it had.
    gone: bool

    @classmethod
    def from_row(cls, row: AttachmentRow) -> Attachment:
        return cls(
            id=row.id,
            sha256=row.sha256,
            size=row.size,
            content_type=row.content_type,
            kind=FileKind(row.kind),
            name=row.name,
            card_id=row.card_id,
            purpose=row.purpose,
            question_id=row.question_id,
            actor=row.actor,
            created_at=row.created_at,
            encrypted=row.encrypted,
            gone=row.gone_at is not None,
        )


@dataclass(frozen=True)
class FileLimits:
    """[files] as the board needs it (the app makes it from the configuration)."""

    #: None: `files` beside a SQLite database; the app always names it.
    folder: Path | None = None
    max_bytes: int = 20 * MB
    quota_bytes: int = 1024 * MB
    max_pixels: int = DEFAULT_MAX_PIXELS
    keep_loose_s: float = 30 * 60


class FileRefused(BoardError):
    """A file the bot does not keep; `str()` is the reason and a way forward, chat-ready."""


class FileGone(BoardError):
    """A kept file's bytes are no longer there (dropped by the quota, or lost)."""


class BoardFiles:
    """The files people and runs send (`board.files`): kept, attached to cards, read back."""

    def __init__(self, store: Store, limits: FileLimits):
        self.store = store
        self.limits = limits
        # Made at first use: the folder is created only when a file comes.
        self._blob_store: BlobStore | None = None
        self._keeping: asyncio.Lock | None = None

    # --- keeping -----------------------------------------------------------------------

    async def keep(
        self,
        data: bytes,
        *,
        name: str,
        declared_type: str,
        actor: str,
        origin: Mapping[str, str],
        encrypted: bool,
    ) -> Attachment:
        """A file someone sent, kept loose (no card yet); FileRefused with the reason.

        `declared_type` is the sender's claim: logged when the bytes say otherwise,
        never stored. `origin`: transport, chat, message_id."""
        limit = self.limits.max_bytes
        if len(data) > limit:
            raise FileRefused(
                f"it is {size_words(len(data))}, more than the {size_words(limit)} one file may "
                "have ([files] max_size_mb)"
            )
        try:
            found = await asyncio.to_thread(identify, data, max_pixels=self.limits.max_pixels)
        except NotTaken as refused:
            raise FileRefused(str(refused)) from None
        if (
            declared_type
            and declared_type.split(";")[0].strip() != found.content_type.split(";")[0]
        ):
            shown = (name[:80], declared_type[:80], found.content_type)
            log.info("file %r: sent as %s, its bytes are %s", *shown)
        new = NewAttachment(
            sha256="",
            size=len(data),
            content_type=found.content_type,
            kind=found.kind.value,
            name=display_name(name, found),
            actor=actor,
            transport=str(origin.get("transport", ""))[:200],
            chat=str(origin.get("chat", ""))[:500],
            message_id=str(origin.get("message_id", ""))[:500],
            encrypted=encrypted,
        )
        return await self._keep(data, new)

    async def keep_outgoing(self, data: bytes, *, name: str, content_type: str) -> Attachment:
        """A file the bot sends (a .patch, a log): never refused for its kind, but counted
        in the quota like any other. Its type is its bytes' where they say, else the one
        given; it has no card until `attach_files` ties it to one."""
        try:
            found = await asyncio.to_thread(identify, data, max_pixels=self.limits.max_pixels)
        except NotTaken:
            found = Sniffed(_kind_of(content_type), content_type, "", "")
        new = NewAttachment(
            sha256="",
            size=len(data),
            content_type=found.content_type,
            kind=found.kind.value,
            name=display_name(name, found),
            purpose=AttachPurpose.OUTGOING.value,
        )
        return await self._keep(data, new)

    async def _keep(self, data: bytes, new: NewAttachment) -> Attachment:
        blobs = self._blobs()
        # One keeper at a time in this process: a blob freed by the quota is removed
        # after the commit, and must not be one another keeper is counting on meanwhile.
        async with self._files_lock():
            freed: list[str] = []
            created = False
            sha256 = ""
            try:
                async with self.store.transaction() as db:
                    sha256, created = await asyncio.to_thread(blobs.put, data)
                    freed = await self._make_room(db, sha256, len(data))
                    row = await attachment_store.add(db, _with_hash(new, sha256))
                    freed = [s for s in freed if not await attachment_store.is_kept(db, s)]
            except BaseException:
                if created:
                    await asyncio.to_thread(blobs.delete, sha256)
                raise
            for gone in freed:
                await asyncio.to_thread(blobs.delete, gone)
        if freed:
            log.info(
                "file store: dropped %d file(s) of finished cards for %s", len(freed), row.name
            )
        return Attachment.from_row(row)

    async def _make_room(self, db: Db, sha256: str, size: int) -> list[str]:
        """Drop what the quota allows so that `size` more bytes fit; the hashes whose
        bytes no row needs any more. FileRefused (and nothing dropped) when it is not
        enough."""
        if await attachment_store.is_kept(db, sha256):
            return []  # the same bytes are kept already: they take no more room
        quota = self.limits.quota_bytes
        used = await attachment_store.kept_bytes(db)
        if used + size <= quota:
            return []
        now = time.time()
        left, freed = used, []
        finished = [phase.value for phase in FINISHED]
        for row in await attachment_store.droppable(db, finished, now - self.limits.keep_loose_s):
            await attachment_store.mark_gone(db, row.id, now)
            if not await attachment_store.is_kept(db, row.sha256):
                left -= row.size
                freed.append(row.sha256)
            if left + size <= quota:
                return freed
        raise FileRefused(
            f"the bot's file store is full ({used / MB:.0f} of {quota / MB:.0f} MB): "
            "archive finished cards or raise [files] quota_mb"
        )

    # --- attaching -----------------------------------------------------------------------

    async def attach(
        self,
        ids: Sequence[int],
        slug: str,
        *,
        purpose: AttachPurpose,
        actor: str,
        question_id: int | None = None,
    ) -> list[Attachment]:
        """Tie kept files to the card `slug` (UnknownCard when there is none) for what they
        went with; an event in the card's history names them. A file already tied to
        another card is attached as a second row over the same bytes."""
        async with self.store.transaction() as db:
            card = await card_store.require(db, slug)
            attached = await attach_in(
                db, ids, card.id, purpose=purpose, actor=actor, question_id=question_id
            )
        return [Attachment.from_row(row) for row in attached]

    async def of_talk(self, talk_id: int) -> list[Attachment]:
        """The files a steer came with, for the worker that hands it to its agent."""
        rows = await attachment_store.of_talk(self.store.reader, talk_id)
        return [Attachment.from_row(row) for row in rows]

    # --- reading -------------------------------------------------------------------------

    async def of_card(self, slug: str) -> list[Attachment]:
        """The card's files, oldest first, dropped ones too (they say so)."""
        card = await card_store.require(self.store.reader, slug)
        rows = await attachment_store.of_card(self.store.reader, card.id)
        return [Attachment.from_row(row) for row in rows]

    async def loose(self, actor: str) -> list[Attachment]:
        """`actor`'s files sent without their card, younger than keep_loose_minutes."""
        since = time.time() - self.limits.keep_loose_s
        rows = await attachment_store.loose(self.store.reader, actor, since)
        return [Attachment.from_row(row) for row in rows]

    async def attachment(self, attachment_id: int) -> Attachment | None:
        row = await attachment_store.get(self.store.reader, attachment_id)
        return Attachment.from_row(row) if row else None

    async def data(self, attachment_id: int) -> bytes:
        """The kept file's bytes, checked against its hash; FileGone when they are not
        there any more."""
        row = await attachment_store.get(self.store.reader, attachment_id)
        if row is None:
            raise FileGone(f"no kept file #{attachment_id}")
        if row.gone_at is not None:
            raise FileGone(_gone_words(row))
        try:
            return await asyncio.to_thread(self._blobs().get, row.sha256)
        except BlobMissing:
            raise FileGone(
                f"{row.name} is no longer in the bot's files folder: send it again"
            ) from None
        except BlobDamaged:
            log.error("file store: %s (#%d) does not match its hash", row.sha256, row.id)
            raise FileGone(f"{row.name} was damaged on the bot's disk: send it again") from None

    # --- the files folder ----------------------------------------------------------------

    def _blobs(self) -> BlobStore:
        if self._blob_store is None:
            self._blob_store = BlobStore(self._files_folder()).open()
        return self._blob_store

    def _files_lock(self) -> asyncio.Lock:
        if self._keeping is None:
            self._keeping = asyncio.Lock()
        return self._keeping

    def _files_folder(self) -> Path:
        if self.limits.folder is not None:
            return self.limits.folder
        # getattr: only SQLite's store has a file beside which files are kept
        database = getattr(self.store, "path", None)
        if isinstance(database, Path):
            return database.parent / "files"
        raise FileRefused("the bot has no folder for files: set [files] folder")


async def attach_in(
    db: Db,
    ids: Sequence[int],
    card_id: int,
    *,
    purpose: AttachPurpose,
    actor: str,
    question_id: int | None = None,
    talk_id: int | None = None,
) -> list[AttachmentRow]:
    """Tie kept files to a card inside a transaction (a move's, a steer's, or its own);
    FileGone for a file that is not there any more."""
    purpose = AttachPurpose(purpose)
    rows = await attachment_store.many(db, ids)
    missing = sorted(set(ids) - {row.id for row in rows})
    if missing:
        raise FileGone(f"no kept file #{missing[0]}: send it again")
    gone = next((row for row in rows if row.gone_at is not None), None)
    if gone is not None:
        raise FileGone(_gone_words(gone))
    ids_here = []
    for row in rows:
        if row.card_id is not None and row.card_id != card_id:
            # getattr: the row's fields a NewAttachment has, copied by their names
            copy = NewAttachment(**{f: getattr(row, f) for f in NewAttachment.__dataclass_fields__})
            row = await attachment_store.add(db, copy, now=row.created_at)
        ids_here.append(row.id)
    await attachment_store.attach(db, ids_here, card_id, purpose.value, question_id, talk_id)
    if ids_here:
        listed = ", ".join(f"{row.name} ({size_words(row.size)})" for row in rows)
        reason = f"attached {listed}"[:300] + _WITH.get(purpose, "")
        await card_store.note(db, card_id, "attach", actor, reason)
    return await attachment_store.many(db, ids_here)


def _with_hash(new: NewAttachment, sha256: str) -> NewAttachment:
    # getattr: a NewAttachment's own fields, copied by their names
    values = {f: getattr(new, f) for f in NewAttachment.__dataclass_fields__}
    return NewAttachment(**{**values, "sha256": sha256})


def _kind_of(content_type: str) -> FileKind:
    main = content_type.split(";")[0].strip().lower()
    if main.startswith("image/"):
        return FileKind.IMAGE
    if main == "application/pdf":
        return FileKind.PDF
    if main.startswith("audio/"):
        return FileKind.AUDIO
    return FileKind.TEXT


def _gone_words(row: AttachmentRow) -> str:
    when = time.strftime("%Y-%m-%d", time.localtime(row.gone_at or 0))
    return (
        f"{row.name} was dropped on {when} to make room in the bot's file store "
        "([files] quota_mb): send it again"
    )
