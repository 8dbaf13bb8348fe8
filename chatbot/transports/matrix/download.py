"""Fetching a Matrix file safely: from the bot's own homeserver, at most `limit` bytes,
decrypted in memory.

The request always goes to the homeserver the bot is logged in to (the mxc URI only
names the file, and only after its strict check), with the bot's access token on the
authenticated media endpoint; a redirect is refused, so the token and the request
never go anywhere else. A size announced by the sender or by the server above the
limit is refused before the body is read; while the body arrives its bytes are
counted and the download stops as soon as the limit is passed. An encrypted
attachment's ciphertext is checked against the hash the sender announced and then
decrypted; the clear bytes are only returned, never written anywhere.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import hashlib
import hmac
import json
import logging
from typing import Any
from urllib.parse import quote

import aiohttp
from nio.crypto.attachments import decrypt_attachment
from nio.exceptions import EncryptionError

from ..files import FileFetchError, FileRefusedSource, FileTooLarge
from .media import AttachmentKeys, MediaRef, clean_name

log = logging.getLogger(__name__)

#: Authenticated media (Matrix 1.11), then the old unauthenticated one for servers
#: that do not know it yet.
AUTHENTICATED = "/_matrix/client/v1/media/download"
LEGACY = "/_matrix/media/v3/download"
#: A whole transfer, in seconds: a stalled server must not hold a fetch forever.
TRANSFER_TIMEOUT = 120.0
CHUNK = 64 * 1024
#: Of an error answer, only this much is read (it is said in the chat, bounded).
ERROR_BYTES = 4096


async def download(
    homeserver: str,
    token: str,
    ref: MediaRef,
    limit: int,
    *,
    within: float = TRANSFER_TIMEOUT,
) -> bytes:
    """The file's bytes (decrypted when it is an encrypted attachment), at most `limit`.

    Raises FileTooLarge, FileRefusedSource or FileFetchError, each saying why.
    """
    if ref.problem:
        raise (FileRefusedSource if ref.refused else FileFetchError)(ref.problem)
    if ref.declared_size is not None and ref.declared_size > limit:
        raise FileTooLarge(limit, ref.declared_size)
    if not token:
        raise FileFetchError("the bot is not logged in to Matrix right now; send it again later")
    try:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=within)) as session:
            body = await _get(session, homeserver.rstrip("/"), token, ref, limit)
    except FileFetchError:
        raise
    except TimeoutError as exc:
        raise FileFetchError(f"the homeserver did not send the file within {within:g} s") from exc
    except aiohttp.ClientError as exc:
        raise FileFetchError(f"the file could not be fetched from the homeserver: {exc}") from exc
    if ref.keys is None:
        return body
    return await asyncio.to_thread(decrypt, body, ref.keys)


async def _get(
    session: aiohttp.ClientSession, homeserver: str, token: str, ref: MediaRef, limit: int
) -> bytes:
    where = f"/{quote(ref.server, safe='')}/{quote(ref.media_id, safe='')}"
    headers = {"Authorization": f"Bearer {token}"}
    for base in (AUTHENTICATED, LEGACY):
        async with session.get(
            homeserver + base + where, headers=headers, allow_redirects=False
        ) as resp:
            if 300 <= resp.status < 400:
                raise FileRefusedSource(
                    "the homeserver sent the file elsewhere; the bot fetches only from its own"
                )
            if resp.status != 200:
                answer = await _error_json(resp)
                if base == AUTHENTICATED and answer.get("errcode") == "M_UNRECOGNIZED":
                    log.info("the homeserver has no authenticated media; using %s", LEGACY)
                    continue
                raise FileFetchError(
                    f"the homeserver refused the file: {_reason(resp.status, answer)}"
                )
            length = resp.content_length
            if length is not None and length > limit:
                raise FileTooLarge(limit, length)
            return await _read_at_most(resp, limit)
    raise FileFetchError("the homeserver does not serve media")  # pragma: no cover


async def _read_at_most(resp: aiohttp.ClientResponse, limit: int) -> bytes:
    """The body, stopped (and the connection dropped) as soon as it passes `limit`."""
    parts: list[bytes] = []
    seen = 0
    async for chunk in resp.content.iter_chunked(CHUNK):
        seen += len(chunk)
        if seen > limit:
            resp.close()  # not released to the pool: the rest is never read
            raise FileTooLarge(limit, seen)
        parts.append(chunk)
    return b"".join(parts)


async def _error_json(resp: aiohttp.ClientResponse) -> dict[str, Any]:
    raw = await resp.content.read(ERROR_BYTES)
    try:
        answer = json.loads(raw)
    except ValueError:
        return {}
    return answer if isinstance(answer, dict) else {}


def _reason(status: int, answer: dict[str, Any]) -> str:
    code = answer.get("errcode") if isinstance(answer.get("errcode"), str) else ""
    words = answer.get("error") if isinstance(answer.get("error"), str) else ""
    said = clean_name(" ".join(part for part in (code, words) if part), 200)
    return f"{status} {said}".strip()


def decrypt(ciphertext: bytes, keys: AttachmentKeys) -> bytes:
    """The clear bytes of an encrypted attachment, after its hash was checked."""
    try:
        # Unpadded base64, as nio reads it (standard or URL-safe letters).
        padded = keys.sha256 + "=" * (-len(keys.sha256) % 4)
        expected = base64.b64decode(padded.encode("ascii"), altchars=b"-_")
    except (binascii.Error, ValueError) as exc:
        raise FileFetchError("the file's announced hash is malformed") from exc
    if not hmac.compare_digest(hashlib.sha256(ciphertext).digest(), expected):
        raise FileFetchError(
            "the file's SHA-256 hash does not match the one its sender announced: "
            "it was changed or damaged on the way; send it again"
        )
    try:
        clear: bytes = decrypt_attachment(ciphertext, keys.key, keys.sha256, keys.iv)
        return clear
    except (EncryptionError, ValueError) as exc:
        raise FileFetchError(f"the file could not be decrypted: {exc}") from exc
