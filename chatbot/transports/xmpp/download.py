"""Fetching a file an XMPP client sent as a link, safely: from allowed upload services
only, at public addresses only, at most `limit` bytes.

A link is whatever the sender wrote, so fetching it is a request the sender aims: at
the bot's own loopback, at the private network it runs in, at any host on the
internet. The rules, in order:

- `http` or `https` only, no user name or password in the link;
- the host must be allowed: listed in `[xmpp] upload_hosts` ("host" or "host:port"),
  or, with that list empty, a host of the owners' or the bot's own domain
  (`example.org`, `upload.example.org`), which is where their clients upload to;
- a host not listed explicitly must be a name (a bare IP address is refused) that
  resolves to public addresses only: loopback, private, link-local, multicast,
  reserved and unspecified addresses (IPv4 and IPv6, IPv4-mapped too) are left
  out. The check runs in the connector's resolver, on the very addresses the
  connection then goes to, so a name that resolves to something else a moment
  later (DNS rebinding) changes nothing;
- no redirects, no proxy from the environment, no cookies, bounded time;
- a `Content-Length` above the limit is refused before the body is read, and the
  body is counted while it arrives: the download stops as soon as it passes the limit.

Every refusal says what and why in words fit for a chat line.
"""

from __future__ import annotations

import ipaddress
import socket
import ssl
from collections.abc import Iterable
from dataclasses import dataclass, replace
from functools import partial

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult
from yarl import URL

from ..files import Fetch, FileFetchError, FileRefusedSource, FileTooLarge, IncomingFile

#: A whole transfer, and reaching the host, in seconds.
TRANSFER_TIMEOUT = 120.0
CONNECT_TIMEOUT = 10.0
CHUNK = 64 * 1024
#: How much of the link an error line repeats.
SHOWN_URL = 120

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# The first that applies names what an address is; an address that is none of these
# but still not global (100.64.0.0/10 and the like) is "not a public address".
_KINDS = (
    ("is_unspecified", "the unspecified address"),
    ("is_loopback", "a loopback address"),
    ("is_link_local", "a link-local address"),
    ("is_multicast", "a multicast address"),
    ("is_private", "a private address"),
    ("is_reserved", "a reserved address"),
)


def address_problem(address: str) -> str | None:
    """What makes `address` one the bot never fetches from by default, or None."""
    try:
        ip: IPAddress = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return "not an IP address"
    if isinstance(ip, ipaddress.IPv6Address):
        # ::ffff:127.0.0.1 and 2002:7f00:1:: reach the IPv4 address they carry.
        inner = ip.ipv4_mapped or ip.sixtofour
        if inner is not None:
            return address_problem(str(inner))
    for attribute, words in _KINDS:
        # getattr: the address's is_private, is_loopback, ... flags listed in _KINDS
        if getattr(ip, attribute):
            return words
    return None if ip.is_global else "not a public address"


def parse_host(entry: str) -> tuple[str, int | None]:
    """`upload.example.org`, `upload.example.org:5281`, `[::1]:8080` as (host, port)."""
    entry = entry.strip().lower()
    if entry.startswith("["):
        host, _, rest = entry[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else ""
    elif entry.count(":") == 1:
        host, port = entry.split(":")
    else:
        host, port = entry, ""
    return host.rstrip("."), int(port) if port else None


def is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class UploadHosts:
    """Which links the bot fetches: hosts listed explicitly, else the default domains."""

    #: (host, port or None for any port), from `[xmpp] upload_hosts`.
    listed: frozenset[tuple[str, int | None]] = frozenset()
    #: The owners' and the bot's own domains, used when nothing is listed.
    domains: tuple[str, ...] = ()

    @classmethod
    def build(cls, listed: Iterable[str], domains: Iterable[str]) -> UploadHosts:
        return cls(
            frozenset(parse_host(entry) for entry in listed),
            tuple(dict.fromkeys(d.strip().lower().rstrip(".") for d in domains if d.strip())),
        )

    def is_listed(self, host: str, port: int) -> bool:
        return (host, port) in self.listed or (host, None) in self.listed

    def by_default(self, host: str) -> bool:
        if self.listed or is_ip(host):
            return False
        return any(host == d or host.endswith("." + d) for d in self.domains)

    def describe(self) -> str:
        """The allowed hosts in words, for refusals."""
        if self.listed:
            entries = sorted(_entry(host, port) for host, port in self.listed)
            return "allowed: " + ", ".join(entries) + ", the [xmpp] upload_hosts"
        if not self.domains:
            return "no upload host is allowed"
        return "allowed: hosts of " + ", ".join(self.domains) + " at public addresses"


def _entry(host: str, port: int | None) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"{shown}:{port}" if port else shown


def _shown(url: str) -> str:
    return url if len(url) <= SHOWN_URL else url[: SHOWN_URL - 1] + "…"


def check_link(url: str, hosts: UploadHosts) -> URL:
    """The parsed link when the bot may fetch it; else FileRefusedSource saying why."""
    try:
        parsed = URL(url)
        host = (parsed.raw_host or "").lower().rstrip(".")
        port = parsed.port
    except (ValueError, TypeError) as exc:
        raise FileRefusedSource(f"the link {_shown(url)} is not a valid address") from exc
    if parsed.scheme not in ("http", "https"):
        raise FileRefusedSource(
            f"the link is {parsed.scheme or 'without a scheme'}, not http or https: "
            "the bot fetches files only from an upload service's web address"
        )
    if parsed.user is not None or parsed.password is not None:
        raise FileRefusedSource("the link carries a user name or password; the bot does not use it")
    if not host or port is None:
        raise FileRefusedSource(f"the link {_shown(url)} names no host")
    if hosts.is_listed(host, port):
        return parsed
    if hosts.by_default(host):
        return parsed
    what = f"{host}, a bare IP address" if is_ip(host) else host
    raise FileRefusedSource(
        f"the link points to {what}, not to an upload service this bot fetches from "
        f"({hosts.describe()})"
    )


class CheckedResolver(AbstractResolver):
    """The system's resolver (it reads /etc/hosts), keeping only public addresses for
    a host that is not listed explicitly. The connector connects to what this returns,
    so the addresses checked are the addresses used."""

    def __init__(self, hosts: UploadHosts) -> None:
        self._hosts = hosts
        self._inner = aiohttp.ThreadedResolver()

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        found = await self._inner.resolve(host, port, family)
        name = host.lower().rstrip(".")
        if self._hosts.is_listed(name, port):
            return found
        kept = [info for info in found if address_problem(info["host"]) is None]
        if not kept:
            refused = ", ".join(
                f"{info['host']} ({address_problem(info['host'])})" for info in found[:4]
            )
            raise FileRefusedSource(
                f"{name} resolves to {refused or 'nothing'}, not to a public address; the bot "
                "fetches from a private or loopback address only from a host listed in "
                "[xmpp] upload_hosts"
            )
        return kept

    async def close(self) -> None:
        await self._inner.close()


def _ssl_context(ca_certs: str | None) -> ssl.SSLContext:
    context = ssl.create_default_context()
    if ca_certs:
        # The same private CA the XMPP server's certificate is checked against.
        context.load_verify_locations(ca_certs)
    return context


async def download(
    url: str,
    limit: int,
    *,
    hosts: UploadHosts,
    ca_certs: str | None = None,
    within: float = TRANSFER_TIMEOUT,
    connect_within: float = CONNECT_TIMEOUT,
) -> bytes:
    """The file's bytes, at most `limit`; FileRefusedSource, FileTooLarge or
    FileFetchError otherwise, each saying why."""
    link = check_link(url, hosts)
    connector = aiohttp.TCPConnector(
        resolver=CheckedResolver(hosts),
        use_dns_cache=False,
        force_close=True,
        ssl=_ssl_context(ca_certs),
    )
    timeout = aiohttp.ClientTimeout(total=within, connect=connect_within)
    where = f"{link.host}:{link.port}"
    try:
        async with aiohttp.ClientSession(
            connector=connector,
            timeout=timeout,
            trust_env=False,
            cookie_jar=aiohttp.DummyCookieJar(),
            auto_decompress=False,
            headers={"Accept-Encoding": "identity"},
        ) as session:
            async with session.get(link, allow_redirects=False) as resp:
                return await _body(resp, limit, where)
    except FileFetchError:
        raise
    except TimeoutError as exc:
        raise FileFetchError(f"{where} did not send the file within {within:g} s") from exc
    except aiohttp.ClientError as exc:
        raise FileFetchError(f"the file could not be fetched from {where}: {exc}") from exc


async def _body(resp: aiohttp.ClientResponse, limit: int, where: str) -> bytes:
    if 300 <= resp.status < 400:
        target = _shown(resp.headers.get("Location", "elsewhere"))
        raise FileRefusedSource(
            f"{where} redirected the link to {target}; the bot follows no redirects"
        )
    if resp.status != 200:
        raise FileFetchError(
            f"{where} answered {resp.status} {resp.reason or ''}".rstrip()
            + (": the file is gone, or was never there" if resp.status in (404, 410) else "")
        )
    encoding = resp.headers.get("Content-Encoding", "identity").strip().lower()
    if encoding not in ("", "identity"):
        raise FileFetchError(f"{where} sent the file compressed ({encoding}), which was not asked")
    length = resp.content_length
    if length is not None and length > limit:
        raise FileTooLarge(limit, length)
    parts: list[bytes] = []
    seen = 0
    async for chunk in resp.content.iter_chunked(CHUNK):
        seen += len(chunk)
        if seen > limit:
            resp.close()  # drop the connection: the rest is never read
            raise FileTooLarge(limit, seen)
        parts.append(chunk)
    return b"".join(parts)


def fetcher(url: str, hosts: UploadHosts, ca_certs: str | None = None) -> Fetch:
    """A file's fetch, bound to this link and these rules."""
    return partial(download, url, hosts=hosts, ca_certs=ca_certs)


def bind(
    files: Iterable[IncomingFile], hosts: UploadHosts, ca_certs: str | None = None
) -> tuple[IncomingFile, ...]:
    """The files, each with its fetch bound to its own link and these rules."""
    return tuple(replace(f, fetch=fetcher(f.source, hosts, ca_certs)) for f in files)
