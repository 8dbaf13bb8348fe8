"""Putting a file on the bot's own server's upload service (XEP-0363, HTTP File Upload).

The service is found once through disco on the bot's domain (slixmpp's `xep_0363`
finds it, and reads the largest file it takes); a slot is asked for the file's
name, size and type; the bytes are PUT to the slot's address; the slot's GET
address is what the message then names. A server without the service is told in
the log once, and asked again only after a while: an admin who adds the service
need not restart the bot.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

import aiohttp
import slixmpp
from slixmpp import JID
from slixmpp.exceptions import IqError, IqTimeout

from ..base import FilesNotSupported, NotConnected, TransportError
from ..files import OutgoingFile

log = logging.getLogger(__name__)

NO_SERVICE = "the XMPP server offers no file upload service (XEP-0363)"
#: How long "no service" is believed before disco is asked again, in seconds.
RECHECK_AFTER = 600.0
#: A whole PUT, in seconds.
PUT_TIMEOUT = 120.0
# The slot may ask the client to send these headers with the PUT, and only these.
_SLOT_HEADERS = frozenset({"authorization", "cookie", "expires"})
_UPLOAD_FORM = "urn:xmpp:http:upload:0"


class Uploads:
    """The bot's upload service: found once, then a slot and a PUT per file."""

    def __init__(
        self,
        client: Callable[[], slixmpp.ClientXMPP | None],
        *,
        timeout: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._client = client
        self._timeout = timeout
        self._clock = clock
        #: The service's JID and its largest file (None: no limit said).
        self._service: tuple[JID, int | None] | None = None
        self._none_since: float | None = None
        self._told = False
        self._finding = asyncio.Lock()

    async def put(self, file: OutgoingFile) -> str:
        """Upload `file`; its GET address. FilesNotSupported without a service."""
        service, largest = await self._find()
        size = len(file.data)
        if largest is not None and size > largest:
            raise TransportError(
                f"the file is {size} bytes, more than the {largest} bytes the XMPP "
                "server's upload service takes"
            )
        client = self._client()
        if client is None:
            raise NotConnected("XMPP is not connected")
        try:
            iq = await client.plugin["xep_0363"].request_slot(
                service, file.name, size, file.content_type, timeout=self._timeout
            )
        except IqError as exc:
            text = exc.iq["error"]["text"] or exc.iq["error"]["condition"]
            raise TransportError(f"the upload service refused a slot: {text}") from exc
        except IqTimeout as exc:
            raise TransportError("the upload service did not answer in time") from exc
        slot = iq["http_upload_slot"]
        headers = {
            h["name"]: h["value"]
            for h in slot["put"]["headers"]
            if str(h["name"]).lower() in _SLOT_HEADERS
        }
        await _put(slot["put"]["url"], file, headers)
        return str(slot["get"]["url"])

    async def _find(self) -> tuple[JID, int | None]:
        async with self._finding:
            if self._service is not None:
                return self._service
            if self._none_since is not None and self._clock() - self._none_since < RECHECK_AFTER:
                raise FilesNotSupported(NO_SERVICE)
            client = self._client()
            if client is None:
                raise NotConnected("XMPP is not connected")
            try:
                info = await client.plugin["xep_0363"].find_upload_service(timeout=self._timeout)
            except (IqError, IqTimeout) as exc:
                raise TransportError(f"could not ask the server for its services: {exc}") from exc
            if info is None:
                self._none_since = self._clock()
                if not self._told:
                    log.warning("%s: the bot sends no files over XMPP", NO_SERVICE)
                    self._told = True
                raise FilesNotSupported(NO_SERVICE)
            self._none_since = None
            self._service = (info["from"], _largest(info))
            log.info("XMPP upload service: %s (largest file %s)", *self._service)
            return self._service


def _largest(info: object) -> int | None:
    """The service's max-file-size from its disco form, when it says one."""
    for form in info["disco_info"].iterables:  # type: ignore[index]
        values = form["values"]
        if values.get("FORM_TYPE") == [_UPLOAD_FORM]:
            try:
                return int(values["max-file-size"])
            except (KeyError, TypeError, ValueError):
                return None
    return None


async def _put(url: str, file: OutgoingFile, headers: dict[str, str]) -> None:
    timeout = aiohttp.ClientTimeout(total=PUT_TIMEOUT)
    # The slot is on the bot's own server; still no proxy from the environment and no
    # redirect: the bytes go where the server said, or nowhere.
    try:
        async with (
            aiohttp.ClientSession(timeout=timeout, trust_env=False) as session,
            session.put(
                url,
                data=file.data,
                headers={**headers, "Content-Type": file.content_type},
                allow_redirects=False,
            ) as resp,
        ):
            if resp.status not in (200, 201):
                said = (await resp.content.read(300)).decode("utf-8", "replace").strip()
                raise TransportError(
                    f"the upload service refused the file: {resp.status} {resp.reason or ''} "
                    f"{said}".strip()
                )
    except TimeoutError as exc:
        raise TransportError(f"the upload did not finish within {PUT_TIMEOUT:g} s") from exc
    except aiohttp.ClientError as exc:
        raise TransportError(f"the upload failed: {exc}") from exc
