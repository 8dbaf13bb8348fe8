"""Device trust facts from an encrypting transport (Matrix E2EE), as the chat layer sees them.

Authority still comes from the sender's identity; a device that does not count
refuses the act with its reason, and changes nothing. Unreadable messages and
verification emoji are said to owners and requesters only.
"""

from __future__ import annotations

import dataclasses

import pytest

from chatbot.domain.phases import Phase
from chatbot.transports.base import (
    Envelope,
    Identity,
    IncomingUnreadable,
    IncomingVerification,
    Room,
    SenderDevice,
)

from .conftest import MATRIX_OWNER, STRANGER, Env, msg, react

MROOM = Room("matrix", "!ops:example.org")
MSTRANGER = Identity("matrix", "@eve:example.org")


def encrypted(text: str, device: SenderDevice | None, sender: Identity = MATRIX_OWNER):
    event = msg(text, sender, chat=MROOM)
    return dataclasses.replace(event, envelope=dataclasses.replace(event.envelope, device=device))


async def test_encrypted_command_from_a_trusted_device_runs(env: Env) -> None:
    await env.card("login")
    await env.one(encrypted("/start login", SenderDevice("PHONE", True)))
    assert await env.phase("login") is Phase.OPERATOR_RUNNING


@pytest.mark.parametrize(
    ("reason", "words"),
    [
        ("unverified", "is not verified"),
        ("unknown", "does not list the device"),
        ("blocked", "is blocked"),
        ("key_mismatch", "do not belong to your device"),
        ("forwarded", "came through another device"),
        ("unencrypted", "only encrypted"),
    ],
)
async def test_an_untrusted_device_is_refused_with_its_reason(
    env: Env, reason: str, words: str
) -> None:
    await env.card("login")
    event = encrypted("/start login", SenderDevice("PHONE", False, reason))
    row = await env.one(event)
    assert row.purpose == "refusal" and words in row.text, row.text
    assert row.reply_to == event.envelope.message_id
    assert await env.phase("login") is Phase.PLANNED


async def test_a_reaction_from_an_untrusted_device_decides_nothing(env: Env) -> None:
    await env.card("login", Phase.NEEDS_HUMAN)
    await env.ask("login", "Which storage?", ["S3", "disk"], message_id="q-1", room=MROOM)
    reaction = react("q-1", "1️⃣", MATRIX_OWNER, chat=MROOM)
    unverified = SenderDevice("PHONE", False, "unverified")
    event = dataclasses.replace(
        reaction, envelope=dataclasses.replace(reaction.envelope, device=unverified)
    )
    row = await env.one(event)
    assert "not verified" in row.text
    assert await env.phase("login") is Phase.NEEDS_HUMAN
    assert (await env.board.reads.open_questions())[0].answer is None


async def test_a_stranger_is_refused_as_a_stranger_whatever_the_device(env: Env) -> None:
    row = await env.one(encrypted("/status", SenderDevice("X", True), MSTRANGER))
    assert "may not use this bot" in row.text


async def test_an_unreadable_message_is_said_once_to_owners_only(env: Env) -> None:
    def unreadable(sender: Identity) -> IncomingUnreadable:
        return IncomingUnreadable(
            envelope=Envelope(chat=MROOM, sender=sender, message_id="unreadable:$enc"),
            target_id="$enc",
        )

    row = await env.one(unreadable(MATRIX_OWNER))
    assert "could not read this message" in row.text and row.reply_to == "$enc"
    assert await env.said(unreadable(MSTRANGER)) == []
    assert await env.said(unreadable(STRANGER)) == []


async def test_verification_emoji_and_result_go_to_the_owner(env: Env) -> None:
    def step(state: str, **kw) -> IncomingVerification:
        return IncomingVerification(
            envelope=Envelope(
                chat=MATRIX_OWNER, sender=MATRIX_OWNER, message_id=f"verification:{state}"
            ),
            device_id="PHONE",
            state=state,
            **kw,
        )

    compare = await env.one(step("compare", emoji=("🐶 Dog", "🔑 Key")))
    assert "PHONE" in compare.text and "🐶 Dog, 🔑 Key" in compare.text
    assert (compare.room, compare.target_kind) == (MATRIX_OWNER.id, "person")
    assert not compare.reply_to
    assert "is verified" in (await env.one(step("done"))).text
    assert (
        "cancelled (m.mismatched_sas)"
        in (await env.one(step("cancelled", detail="m.mismatched_sas"))).text
    )
    compare = step("compare")
    stranger = dataclasses.replace(
        compare, envelope=dataclasses.replace(compare.envelope, sender=MSTRANGER, chat=MSTRANGER)
    )
    assert await env.said(stranger) == []
