"""A tiny real matrix-nio client playing the owner (or a stranger) in tests."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import Callable
from typing import Any

from nio import (
    AsyncClient,
    DownloadResponse,
    JoinResponse,
    LocalProtocolError,
    LoginResponse,
    RoomCreateResponse,
    RoomPreset,
    RoomSendResponse,
    SyncResponse,
    UploadResponse,
)
from nio.crypto.attachments import decrypt_attachment

from tests.integration.waiting import first_matching

# A bound, not a delay: generous, so that a loaded box (two cores, other runs beside)
# does not fail a test whose event is merely late (issue 39).
TIMEOUT = 30
log = logging.getLogger(__name__)


Inbox = asyncio.Queue[tuple[str, dict[str, Any]]]


async def stop_client(client: AsyncClient, sync: asyncio.Task | None) -> None:
    """End the sync loop, log the device out (so no test leaves devices behind), close."""
    if sync is not None:
        sync.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await sync
    with contextlib.suppress(Exception):
        await client.logout()
    await client.close()


#: Enough of a room's timeline per sync that no test's burst of events leaves a gap.
_TIMELINE = {"room": {"timeline": {"limit": 200}}}


class Syncing:
    """A peer's sync loop, as a chat app runs one: a failed round is kept, said, and
    followed by the next.

    Not nio's `sync_forever`: it runs the key query beside the long poll, and a test's
    own `keys_query()` in between leaves the loop's to fail ("No key query required"),
    which ends the loop for good: the peer hears nothing more, and its test waits out a
    timeout no report explains. Here the key requests follow each sync, one at a time,
    and a timeout names the last sync's age and any failed rounds.

    Each round asks for up to 200 events of a room's timeline. Synapse's default is 10:
    when more came since the last round (a run's status edits, its notices, under load),
    the answer would be "limited", leaving out the earlier events, which a chat app fills
    in by paging back and this peer does not. A gap that still happens is said. (Traced
    sync by sync under load, no round came back limited: the run's last status edit that
    a fresh-clone run missed had never been sent, see `store/chat.enqueue`.)
    """

    def __init__(self, client: AsyncClient) -> None:
        self.client = client
        self.failures: list[str] = []
        self.gaps: list[str] = []
        self.last_sync_at: float | None = None
        self.task: asyncio.Task | None = None

    def start(self) -> asyncio.Task:
        self.task = asyncio.create_task(self._loop())
        return self.task

    async def _loop(self) -> None:
        client = self.client
        while True:
            try:
                response = await client.sync(timeout=30000, sync_filter=_TIMELINE)
                if isinstance(response, SyncResponse):
                    self.last_sync_at = time.monotonic()
                    self.gaps += [
                        room for room, info in response.rooms.join.items() if info.timeline.limited
                    ]
                await client.run_response_callbacks([response])
                for done in await self._keys():
                    await client.run_response_callbacks([done])
            except Exception as error:  # noqa: BLE001 - kept, said, and synced on
                self.failures.append(repr(error))
                log.warning("%s: a sync round failed: %r", client.user_id, error)
                # A back-off, as a client's: a failure that repeats must not spin.
                await asyncio.sleep(0.2)

    async def _keys(self) -> list[Any]:
        """What an encrypting client does after a sync; nothing for one without crypto."""
        client, done = self.client, []
        if client.should_upload_keys:
            done.append(await client.keys_upload())
        if client.should_query_keys:
            with contextlib.suppress(LocalProtocolError):  # the test asked meanwhile
                done.append(await client.keys_query())
        if client.should_claim_keys:
            done.append(await client.keys_claim(client.get_users_for_key_claiming()))
        done.extend(await client.send_to_device_messages())
        return done

    def state(self) -> str:
        at = self.last_sync_at
        age = "never" if at is None else f"{time.monotonic() - at:.1f}s ago"
        failed = f"; failed rounds: {self.failures}" if self.failures else ""
        gaps = f"; events missed in a sync gap in {self.gaps}" if self.gaps else ""
        return f"; last sync {age}{failed}{gaps}"


async def take_matching(
    inbox: Inbox,
    pred: Callable[[str, dict[str, Any]], bool],
    within: float,
    who: str,
    *,
    also: Callable[[], str] = str,
    taken: list[str] | None = None,
) -> tuple[str, dict[str, Any]]:
    """The first (room, event) in `inbox` that `pred` accepts; the others stay queued."""
    return await first_matching(
        inbox,
        lambda item: pred(*item),
        within=within,
        who=who,
        shown=lambda item: (
            f"{item[1].get('sender')} {item[1].get('type')} "
            f"{(item[1].get('content') or {}).get('body', '')!r:.80}"
        ),
        also=also,
        taken=taken,
    )


async def upload(
    client: AsyncClient, data: bytes, *, name: str, mimetype: str, encrypt: bool
) -> tuple[str, dict[str, Any] | None]:
    """Put bytes in the media repository as a client does: (mxc URI, keys when encrypted)."""
    resp, keys = await client.upload(
        lambda *_: data, content_type=mimetype, filename=name, encrypt=encrypt, filesize=len(data)
    )
    assert isinstance(resp, UploadResponse), resp
    return resp.content_uri, keys


def media_content(
    msgtype: str,
    url: str,
    *,
    name: str,
    mimetype: str,
    size: int,
    keys: dict[str, Any] | None = None,
    caption: str | None = None,
    reply_to: str | None = None,
) -> dict[str, Any]:
    """An m.image/m.file/... as Element sends it: `file` when encrypted, else `url`; with
    a caption, body is the caption and filename the name (MSC2530)."""
    content: dict[str, Any] = {
        "msgtype": msgtype,
        "body": caption if caption is not None else name,
        "info": {"mimetype": mimetype, "size": size},
    }
    if caption is not None:
        content["filename"] = name
    if keys is not None:
        content["file"] = {"url": url, "mimetype": mimetype, **keys}
    else:
        content["url"] = url
    if reply_to:
        content["m.relates_to"] = {"m.in_reply_to": {"event_id": reply_to}}
    return content


async def fetch_file(client: AsyncClient, content: dict[str, Any]) -> bytes:
    """What a client shows for a received file: downloaded, decrypted when encrypted."""
    file = content.get("file")
    resp = await client.download(mxc=file["url"] if file else content["url"])
    assert isinstance(resp, DownloadResponse), resp
    if file is None:
        return resp.body
    return decrypt_attachment(resp.body, file["key"]["k"], file["hashes"]["sha256"], file["iv"])


class MatrixPeer:
    def __init__(self, homeserver: str, user_id: str, password: str) -> None:
        self.client = AsyncClient(homeserver, user_id)
        self.password = password
        self.inbox: asyncio.Queue[tuple[str, dict[str, Any]]] = asyncio.Queue()
        self.taken: list[str] = []
        self.invites: asyncio.Queue[str] = asyncio.Queue()
        self._task: asyncio.Task | None = None

    @property
    def user_id(self) -> str:
        return self.client.user_id

    async def start(self) -> MatrixPeer:
        resp = await self.client.login(self.password, device_name="test peer")
        assert isinstance(resp, LoginResponse), resp
        # Start from now: the peer only cares about what happens during the test.
        first = await self.client.sync(timeout=0, sync_filter={"room": {"timeline": {"limit": 0}}})
        assert isinstance(first, SyncResponse), first
        self.client.add_response_callback(self._on_sync, SyncResponse)
        self.syncing = Syncing(self.client)
        self._task = self.syncing.start()
        return self

    async def stop(self) -> None:
        await stop_client(self.client, self._task)

    async def _on_sync(self, response: SyncResponse) -> None:
        for room_id in response.rooms.invite:
            self.invites.put_nowait(room_id)
        for room_id, info in response.rooms.join.items():
            for event in info.timeline.events:
                self.inbox.put_nowait((room_id, event.source))

    async def join(self, room: str) -> str:
        resp = await self.client.join(room)
        assert isinstance(resp, JoinResponse), resp
        return resp.room_id

    async def create_room(self, *, invite: tuple[str, ...] = (), direct: bool = False) -> str:
        resp = await self.client.room_create(
            invite=list(invite),
            is_direct=direct,
            preset=RoomPreset.trusted_private_chat if direct else RoomPreset.private_chat,
        )
        assert isinstance(resp, RoomCreateResponse), resp
        return resp.room_id

    async def send(
        self, room_id: str, content: dict[str, Any], etype: str = "m.room.message"
    ) -> str:
        resp = await self.client.room_send(room_id, etype, content, tx_id=uuid.uuid4().hex)
        assert isinstance(resp, RoomSendResponse), resp
        return resp.event_id

    async def say(self, room_id: str, text: str) -> str:
        return await self.send(room_id, {"msgtype": "m.text", "body": text})

    async def reply(
        self,
        room_id: str,
        text: str,
        target: str,
        quote: str = "> <@owner:localhost> something else entirely",
    ) -> str:
        # A lying fallback quote: the bot must go by the event id alone.
        return await self.send(
            room_id,
            {
                "msgtype": "m.text",
                "body": f"{quote}\n\n{text}",
                "m.relates_to": {"m.in_reply_to": {"event_id": target}},
            },
        )

    async def send_file(
        self, room_id: str, data: bytes, *, name: str, mimetype: str, msgtype: str = "m.file"
    ) -> str:
        url, _ = await upload(self.client, data, name=name, mimetype=mimetype, encrypt=False)
        return await self.send(
            room_id, media_content(msgtype, url, name=name, mimetype=mimetype, size=len(data))
        )

    async def fetch_file(self, content: dict[str, Any]) -> bytes:
        return await fetch_file(self.client, content)

    async def edit(self, room_id: str, target: str, text: str) -> str:
        return await self.send(
            room_id,
            {
                "msgtype": "m.text",
                "body": f"* {text}",
                "m.new_content": {"msgtype": "m.text", "body": text},
                "m.relates_to": {"rel_type": "m.replace", "event_id": target},
            },
        )

    async def react(self, room_id: str, target: str, key: str) -> str:
        return await self.send(
            room_id,
            {"m.relates_to": {"rel_type": "m.annotation", "event_id": target, "key": key}},
            "m.reaction",
        )

    async def redact(self, room_id: str, event_id: str) -> str:
        resp = await self.client.room_redact(room_id, event_id)
        return resp.event_id

    async def expect(
        self, pred: Callable[[str, dict[str, Any]], bool], *, within: float = TIMEOUT
    ) -> tuple[str, dict[str, Any]]:
        return await take_matching(
            self.inbox, pred, within, self.user_id, also=self.syncing.state, taken=self.taken
        )

    async def expect_body(self, text: str, *, within: float = TIMEOUT) -> dict[str, Any]:
        _, ev = await self.expect(
            lambda _r, e: (e.get("content") or {}).get("body") == text, within=within
        )
        return ev
