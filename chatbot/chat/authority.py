"""Who may do what: roles from configured identities, the rate limiter, notice memory.

errbot's acls plugin is the model: one filter in front of every command, not a
check inside each handler. `Authority.role` compares `Identity` values
(transport + bare id, in the form its network's record says: `normal`) with the
configured ones and nothing else: a nick or display name never enters this
module. A sender of None (a room that hides real JIDs) is a stranger.

The rate limiter and the notice memory are in memory on purpose: after a restart
the worst case is one extra notice or ten extra commands, while anything that
must survive a restart (requests, questions) is a database row.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from enum import StrEnum

from chatbot.chat.commands import Access
from chatbot.config import Config
from chatbot.transports.base import Identity, IncomingEvent, SenderDevice
from chatbot.transports.console import TRANSPORT as CONSOLE
from chatbot.transports.networks import claiming, normal

#: Imported names other modules take from here: part of this module's interface.
__all__ = [
    "CONSOLE",
    "normal",
]

Clock = Callable[[], float]


class Standing(StrEnum):
    """What a sender is to this bot (not an agent's role, which is `domain.roles.Role`)."""

    OWNER = "owner"
    REQUESTER = "requester"
    STRANGER = "stranger"


class Permission(StrEnum):
    """What a sender's standing allows of a command (not a check's verdict, which is
    `runners.checks.Verdict`)."""

    ALLOW = "allow"
    #: A requester's /start, /draft, /research: posted as a request for an owner.
    AS_REQUEST = "as_request"
    DENY = "deny"


def permits(role: Standing, access: Access) -> Permission:
    """The whole access policy, in one table-like function."""
    if role is Standing.OWNER:
        return Permission.ALLOW
    if role is Standing.REQUESTER:
        if access is Access.READ:
            return Permission.ALLOW
        if access is Access.REQUEST:
            return Permission.AS_REQUEST
    return Permission.DENY


def from_config_string(value: str) -> Identity:
    """A configured owner or requester, on the network it is written for
    (`@name:server` is Matrix, `name@server` XMPP)."""
    value = value.strip()
    network = claiming(value)
    if network is None:
        raise ValueError(f"{value!r} is no identity of a chat network the bot knows")
    return network.identity(value)


@dataclass(frozen=True)
class Authority:
    owners: frozenset[Identity]
    requesters: frozenset[Identity] = frozenset()

    @classmethod
    def of(
        cls, owners: Iterable[Identity | str], requesters: Iterable[Identity | str] = ()
    ) -> Authority:
        return cls(
            frozenset(_identity(o) for o in owners), frozenset(_identity(r) for r in requesters)
        )

    @classmethod
    def from_config(cls, config: Config) -> Authority:
        """Configured owners and requesters; the console's person is an owner there."""
        owners = [from_config_string(o) for o in config.bot.owners]
        console = config.console_owner
        if console is not None:
            # Only someone at the bot's own terminal can speak as the console's person,
            # named as wiring names it for the console transport.
            owners.append(Identity(CONSOLE, console))
        return cls.of(owners, [from_config_string(r) for r in config.bot.requesters])

    def role(self, sender: Identity | None) -> Standing:
        if sender is None:
            return Standing.STRANGER
        who = normal(sender)
        if who in self.owners:
            return Standing.OWNER
        if who in self.requesters:
            return Standing.REQUESTER
        return Standing.STRANGER


def untrusted_device(event: IncomingEvent) -> SenderDevice | None:
    """The sending device, when it may not speak for its sender (Matrix E2EE trust).

    Authority still comes from the sender's identity; the transport only says
    whether the device the event came from counts under the configured trust
    mode. An event with no device facts (XMPP, console, Matrix "tofu" in clear)
    passes.
    """
    device = event.envelope.device
    return device if device is not None and not device.trusted else None


def _identity(value: Identity | str) -> Identity:
    return normal(value) if isinstance(value, Identity) else from_config_string(value)


@dataclass
class _Bucket:
    tokens: float
    at: float
    told: bool = False


@dataclass
class RateLimiter:
    """A token bucket per sender: `capacity` commands at once, one more every `refill_s`.

    The sender is told once when limited (`take` returns "tell"), then further
    commands are dropped silently until a token is free again. Only requesters meet it
    (intake.py): owners are never limited.
    """

    capacity: int = 10
    refill_s: float = 3.0
    clock: Clock = time.monotonic
    _buckets: dict[object, _Bucket] = field(default_factory=dict)

    def take(self, key: object) -> str:
        """ "ok" (go ahead), "tell" (limited, say so once) or "drop" (limited, silent)."""
        now = self.clock()
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = _Bucket(float(self.capacity), now)
        bucket.tokens = min(self.capacity, bucket.tokens + (now - bucket.at) / self.refill_s)
        bucket.at = now
        if bucket.tokens >= 1:
            bucket.tokens -= 1
            bucket.told = False
            return "ok"
        if bucket.told:
            return "drop"
        bucket.told = True
        return "tell"

    def wait_s(self, key: object) -> float:
        """How long until `key` may send its next command."""
        bucket = self._buckets.get(key)
        if bucket is None:
            return 0.0
        tokens = bucket.tokens + (self.clock() - bucket.at) / self.refill_s
        return max(0.0, (1 - tokens) * self.refill_s)


@dataclass
class NoticeMemory:
    """At most one notice per key and `window_s` (strangers are told once an hour)."""

    window_s: float = 3600.0
    clock: Clock = time.monotonic
    #: Forget old entries beyond this many keys, so a flood of identities cannot grow it.
    max_keys: int = 10_000
    _last: dict[object, float] = field(default_factory=dict)

    def should_tell(self, key: object) -> bool:
        now = self.clock()
        last = self._last.get(key)
        if last is not None and now - last < self.window_s:
            return False
        if len(self._last) >= self.max_keys:
            self._last = {k: t for k, t in self._last.items() if now - t < self.window_s}
            if len(self._last) >= self.max_keys:
                return False  # a flood of senders: stay quiet rather than grow
        self._last[key] = now
        return True
