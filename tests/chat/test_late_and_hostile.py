"""Commands that reach the bot late, and refusals that must not echo what they refuse."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

from chatbot.chat import render
from chatbot.domain.phases import Phase
from chatbot.store import Store

from .conftest import OWNER, STRANGER, Env, make_env, msg


def late(event, seconds_ago: float):
    return dataclasses.replace(
        event, envelope=dataclasses.replace(event.envelope, at=time.time() - seconds_ago)
    )


async def test_a_command_caught_up_within_the_limit_runs(env: Env) -> None:
    await env.card("login")
    await env.one(late(msg("/archive login"), 600))
    assert await env.phase("login") is Phase.ARCHIVED


async def test_a_command_older_than_the_limit_is_answered_too_old_and_not_run(env: Env) -> None:
    await env.card("login")
    row = await env.one(late(msg("/archive login"), 2 * 3600))
    assert row.purpose == "refusal"
    assert "too old" in row.text and "not run" in row.text.lower() and "2h" in row.text
    assert await env.phase("login") is Phase.PLANNED


async def test_the_limit_is_configurable_and_german_too(store: Store, tmp_path: Path) -> None:
    env = make_env(store, tmp_path, locale="de", catch_up_max_age_s=60)
    await env.card("login")
    row = await env.one(late(msg("/archive login"), 120))
    assert "zu alt" in row.text and "nicht ausgeführt" in row.text.lower()
    assert await env.phase("login") is Phase.PLANNED


async def test_a_caught_up_burst_is_not_rate_limited(env: Env) -> None:
    for n in range(15):
        await env.card(f"c{n}")
    for n in range(15):
        await env.chat.handle(late(msg(f"/archive c{n}"), 30))
    assert all([await env.phase(f"c{n}") is Phase.ARCHIVED for n in range(15)])


async def test_a_strangers_late_command_is_refused_as_any_other(env: Env) -> None:
    await env.card("login")
    row = await env.one(late(msg("/start login", STRANGER), 2 * 3600))
    assert "may not" in row.text


def test_only_known_senders_count_for_the_store(env: Env) -> None:
    assert env.chat.counts(OWNER) and not env.chat.counts(STRANGER)
    assert not env.chat.counts(None)


async def test_a_bad_slug_is_quoted_without_control_characters_and_short(env: Env) -> None:
    row = await env.one(msg("/start \x1b[31mevil\x00\x1b[0m\u202e"))
    assert not any(ord(c) < 0x20 or c == "\u202e" for c in row.text), repr(row.text)
    assert "Usage" in row.text
    row = await env.one(msg("/start " + "x" * 5000))
    assert len(row.text) < 300


def test_shown_keeps_ordinary_text() -> None:
    assert render.shown("Grüße-1") == "Grüße-1"
    assert render.shown("a\x1bb\x00c") == "a b c"
