"""The Matrix transport's files: sending one through the media repository, and binding
an incoming one's fetch to the safe download.

A file for an encrypted room is encrypted before it leaves (AES-CTR, nio's
`upload(encrypt=True)`): the media repository only ever holds ciphertext, and the key
travels inside the encrypted event. Whether a room is encrypted is read exactly as
the message itself will be (the synced room's state), so a file's ciphertext and its
event never disagree. The event keeps its transaction id across retries, so the
server posts it once, as any message of ours; a retry after a crash uploads the
bytes again (an unused upload costs the server space, never a second message).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import Any

from nio import UploadResponse

from ..base import NotConnected, Outgoing, TargetUnavailable, TransportError
from ..files import Fetch, FileFetchError, OutgoingFile
from . import events as wire
from . import media
from .crypto import wait_for
from .download import TRANSFER_TIMEOUT, download
from .outgoing import MatrixOutgoing

log = logging.getLogger(__name__)


class MatrixFiles(MatrixOutgoing):
    """Mixed into MatrixTransport, after the outgoing side it builds on."""

    def _fetcher(self, ref: media.MediaRef) -> Fetch:
        """A fetch for one incoming file, through whatever client is logged in when it runs."""

        async def fetch(limit: int) -> bytes:
            client = self.client
            if client is None:
                raise FileFetchError("the bot is not connected to Matrix right now; try later")
            return await download(client.homeserver, client.access_token, ref, limit)

        return fetch

    async def _encrypts(self, room_id: str) -> bool:
        """Whether what we post in `room_id` goes out encrypted (as `_put` will decide)."""
        crypto = self.crypto
        client = self.client
        if crypto is None or not crypto.active or client is None:
            return False
        if room_id not in client.rooms and not await wait_for(
            self._sync_done, lambda: room_id in client.rooms, self.settings.send_timeout
        ):
            raise TargetUnavailable(f"Matrix room {room_id} is not (yet) joined")
        return bool(client.rooms[room_id].encrypted)

    async def _upload(self, file: OutgoingFile, encrypt: bool) -> tuple[str, dict[str, Any] | None]:
        """Put the bytes in the media repository: (their mxc URI, the keys when encrypted)."""
        client = self.client
        if client is None or not client.access_token:
            raise NotConnected("Matrix is not logged in")
        data = file.data
        try:
            resp, keys = await asyncio.wait_for(
                client.upload(
                    # Called again on each retry of nio's (a 429, a timeout): whole bytes.
                    lambda *_retries: data,
                    content_type=media.mime_type(file.content_type) or "application/octet-stream",
                    filename=file.name,
                    encrypt=encrypt,
                    # AES-CTR adds nothing: the ciphertext is as long as the bytes.
                    filesize=len(data),
                ),
                TRANSFER_TIMEOUT,
            )
        except OSError as exc:
            raise NotConnected(f"Matrix upload of {file.name!r} failed: {exc!r}") from exc
        except TimeoutError as exc:
            raise TransportError(f"Matrix upload of {file.name!r} timed out") from exc
        if not isinstance(resp, UploadResponse):
            raise TransportError(f"the homeserver refused the file {file.name!r}: {_why(resp)}")
        if media.parse_mxc(resp.content_uri) is None:
            raise TransportError(f"the homeserver gave a malformed address: {resp.content_uri!r}")
        return resp.content_uri, keys

    async def _send_file(self, message: Outgoing, file: OutgoingFile) -> str:
        """Upload `file` (encrypted in an encrypted room) and post it as an m.image,
        m.audio, m.video or m.file; the same txn_id again posts it once."""
        room_id = await self._room_for(message.target)
        encrypt = await self._encrypts(room_id)
        url, keys = await self._upload(file, encrypt)
        content = media.file_content(
            name=file.name,
            content_type=file.content_type,
            size=len(file.data),
            url=url,
            keys=keys,
            caption=message.text,
            reply_to=message.reply_to,
        )
        if wire.fit_content(content):
            log.warning("the caption of %s to %s was cut", file.name, room_id)
        txn_id = message.txn_id or uuid.uuid4().hex
        return await self._room_send(room_id, "m.room.message", content, txn_id)


def _why(resp: Any) -> str:
    """The server's reason for a refused upload, with the HTTP status (413: too large)."""
    # getattr: nio's error responses differ in what they carry (these three lines)
    status = getattr(getattr(resp, "transport_response", None), "status", None)
    code = getattr(resp, "status_code", None) or ""
    message = getattr(resp, "message", None) or ""
    said = " ".join(str(part) for part in (status, code, message) if part)
    return said or "no reason given"
