"""Roles from configured identities, the one access policy, the rate limiter, notice memory."""

from __future__ import annotations

import pytest

from chatbot.chat.authority import (
    Authority,
    NoticeMemory,
    Permission,
    RateLimiter,
    Standing,
    from_config_string,
    permits,
)
from chatbot.chat.commands import Access
from chatbot.transports.base import Identity

from .conftest import Clock


def test_config_strings_map_to_identities_by_form() -> None:
    assert from_config_string("Owner@Example.org") == Identity("xmpp", "owner@example.org")
    assert from_config_string("@owner:example.org") == Identity("matrix", "@owner:example.org")


def test_roles_compare_identities_only() -> None:
    authority = Authority.of(["owner@example.org", "@boss:example.org"], ["req@example.org"])
    assert authority.role(Identity("xmpp", "owner@example.org")) is Standing.OWNER
    assert authority.role(Identity("xmpp", "OWNER@example.org/laptop")) is Standing.OWNER
    assert authority.role(Identity("matrix", "@boss:example.org")) is Standing.OWNER
    assert authority.role(Identity("xmpp", "req@example.org")) is Standing.REQUESTER
    # The same string on another transport is another person.
    assert authority.role(Identity("matrix", "owner@example.org")) is Standing.STRANGER
    assert authority.role(Identity("console", "owner@example.org")) is Standing.STRANGER
    # Matrix ids are not case-folded: @Boss is not @boss.
    assert authority.role(Identity("matrix", "@Boss:example.org")) is Standing.STRANGER
    assert authority.role(None) is Standing.STRANGER


def test_an_owner_listed_as_requester_too_is_an_owner() -> None:
    authority = Authority.of(["a@example.org"], ["a@example.org"])
    assert authority.role(Identity("xmpp", "a@example.org")) is Standing.OWNER


@pytest.mark.parametrize(
    "role, access, verdict",
    [
        (Standing.OWNER, Access.OWNER, Permission.ALLOW),
        (Standing.OWNER, Access.REQUEST, Permission.ALLOW),
        (Standing.OWNER, Access.READ, Permission.ALLOW),
        (Standing.REQUESTER, Access.OWNER, Permission.DENY),
        (Standing.REQUESTER, Access.REQUEST, Permission.AS_REQUEST),
        (Standing.REQUESTER, Access.READ, Permission.ALLOW),
        (Standing.STRANGER, Access.OWNER, Permission.DENY),
        (Standing.STRANGER, Access.REQUEST, Permission.DENY),
        (Standing.STRANGER, Access.READ, Permission.DENY),
    ],
)
def test_the_access_policy(role: Standing, access: Access, verdict: Permission) -> None:
    assert permits(role, access) is verdict


def test_token_bucket() -> None:
    clock = Clock()
    limiter = RateLimiter(capacity=3, refill_s=2.0, clock=clock)
    assert [limiter.take("a") for _ in range(5)] == ["ok", "ok", "ok", "tell", "drop"]
    assert limiter.take("b") == "ok"  # per sender
    clock.advance(1.9)
    assert limiter.take("a") == "drop"
    clock.advance(0.1)
    assert limiter.take("a") == "ok"
    assert limiter.take("a") == "tell"  # limited again after a pass: told again
    clock.advance(600)
    assert [limiter.take("a") for _ in range(4)] == ["ok", "ok", "ok", "tell"]  # capped at 3


def test_notice_memory_once_per_window() -> None:
    clock = Clock()
    notices = NoticeMemory(window_s=3600, clock=clock)
    assert notices.should_tell("x") is True
    assert notices.should_tell("x") is False
    assert notices.should_tell("y") is True
    clock.advance(3599)
    assert notices.should_tell("x") is False
    clock.advance(1)
    assert notices.should_tell("x") is True


def test_notice_memory_stays_bounded_under_a_flood() -> None:
    clock = Clock()
    notices = NoticeMemory(window_s=3600, clock=clock, max_keys=100)
    told = sum(notices.should_tell(n) for n in range(1000))
    assert told == 100 and len(notices._last) == 100
    clock.advance(3600)
    assert notices.should_tell("late") is True
    assert len(notices._last) == 1
