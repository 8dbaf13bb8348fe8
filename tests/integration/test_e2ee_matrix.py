"""End to end in encrypted Matrix rooms: the real bot process and E2EE nio clients on Synapse.

The owner (and the stranger) are real matrix-nio clients with their own crypto
stores, in a room created encrypted. Every assertion on "encrypted" is the
client's own: the event reached it as m.room.encrypted and it decrypted it.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from pathlib import Path
from typing import Any

import pytest

from chatbot.transports.base import Outgoing
from tests.inprocess import in_thread
from tests.pipeline.harness import builder_answer, direct, operator_answer, review_answer

from .bot_process import ROOT, BotProcess, bot_config, prepare, write_scenario
from .matrix_e2ee_peer import E2eePeer

WITHIN = 30.0
INTENT = "# Reporting\n\nBuild the monthly report.\n"
BUILD = {
    "match": "COMMIT-MESSAGE",
    "cli": "codex",
    "answer": builder_answer("Add report"),
    "files": {"report.py": "x = 1\n"},
}
APPROVE = {"match": "REVIEW-RESULT", "answer": review_answer("approve", "Clean.")}


@pytest.fixture
async def e2ee_peer(matrix_info: dict[str, Any], tmp_path: Path):
    made: list[E2eePeer] = []

    async def make(account: str = "owner") -> E2eePeer:
        acc = matrix_info["accounts"][account]
        store = tmp_path / f"peer-{account}-{len(made)}"
        peer = E2eePeer(matrix_info["homeserver"], acc["user_id"], acc["password"], store)
        made.append(peer)
        return await peer.start()

    yield make
    for peer in made:
        await peer.stop()


def bot_id(servers) -> str:
    return servers.info["matrix"]["accounts"]["bot"]["user_id"]


async def start_encrypted(
    tmp_path: Path,
    servers,
    owner: E2eePeer,
    turns: list[dict[str, Any]],
    intents: dict[str, str],
    *,
    trust: str = "tofu",
    invite: tuple[str, ...] = (),
    extra_rooms: tuple[str, ...] = (),
) -> tuple[BotProcess, str]:
    """An encrypted room made by the owner, and the bot process configured to sit in it."""
    bot = bot_id(servers)
    room = await owner.create_encrypted_room(invite=(bot, *invite))
    prepare(tmp_path, intents)
    write_scenario(tmp_path, turns)
    path = bot_config(
        tmp_path,
        servers.info,
        xmpp=False,
        matrix=True,
        matrix_rooms=(room, *extra_rooms),
        matrix_lines=(f'trust = "{trust}"',),
    )
    process = await BotProcess(tmp_path, path).start()
    await process.logged(r"matrix transport online", within=WITHIN)
    await owner.until(lambda: bot in owner.client.rooms[room].users, within=WITHIN)
    # Earlier tests' bots left devices behind: the owner must know this bot's one.
    await owner.devices_of(bot, bot_device(process, bot), within=WITHIN)
    return process, room


def bot_device(process: BotProcess, bot: str) -> str:
    rows = process.query("SELECT value FROM kv WHERE key = ?", (f"matrix:{bot}:device_id",))
    return rows[0]["value"]


async def bot_says(peer: E2eePeer, room: str, bot: str, pattern: str) -> dict[str, Any]:
    regex = re.compile(pattern, re.S)
    _, event = await peer.expect(
        lambda r, ev: (
            r == room
            and ev.get("sender") == bot
            and ev.get("type") == "m.room.message"
            and bool(regex.search((ev.get("content") or {}).get("body", "")))
        ),
        within=WITHIN,
    )
    return event


def replied_to(event: dict[str, Any]) -> str | None:
    rel = (event.get("content") or {}).get("m.relates_to") or {}
    return (rel.get("m.in_reply_to") or {}).get("event_id")


async def test_encrypted_status_answered_encrypted_tofu_and_stranger_refused(
    tmp_path: Path, servers, e2ee_peer
) -> None:
    owner = await e2ee_peer("owner")
    stranger = await e2ee_peer("stranger")
    bot = bot_id(servers)
    process, room = await start_encrypted(
        tmp_path, servers, owner, [], {"report": INTENT}, invite=(stranger.user_id,)
    )
    try:
        # tofu (the default): the owner's device was never verified and still counts.
        t0 = time.monotonic()
        command = await owner.say(room, "/status")
        answer = await bot_says(owner, room, bot, r"report")
        rtt = time.monotonic() - t0
        assert answer["_decrypted"], "the bot answered in clear in an encrypted room"
        assert replied_to(answer) == command
        print(f"\nencrypted /status round trip: {rtt * 1000:.0f} ms")

        await stranger.join(room)
        await stranger.devices_of(bot, bot_device(process, bot))
        poke = await stranger.say(room, "/start report")
        refusal = await bot_says(stranger, room, bot, r"may not use this bot")
        assert refusal["_decrypted"] and replied_to(refusal) == poke
        assert process.phase("report") == "planned"
        assert "cannot read" not in process.log_text()
    finally:
        await process.stop()


async def test_e2ee_start_question_reply_across_a_restart(
    tmp_path: Path, servers, e2ee_peer
) -> None:
    turns = [
        {"match": "Which storage", "answer": direct("light")},
        {
            "match": "OPERATOR-DECISION",
            "answer": operator_answer(
                {"decision": "needs_human", "reason": "unclear", "human_action": "Which storage?"}
            ),
        },
        BUILD,
        APPROVE,
    ]
    owner = await e2ee_peer("owner")
    bot = bot_id(servers)
    process, room = await start_encrypted(tmp_path, servers, owner, turns, {"report": INTENT})
    try:
        command = await owner.say(room, "/start report")
        ack = await bot_says(owner, room, bot, r"report")
        assert ack["_decrypted"] and replied_to(ack) == command
        question = await bot_says(owner, room, bot, r"Which storage\?")
        assert question["_decrypted"]
        device = bot_device(process, bot)
        assert (tmp_path / "matrix-crypto" / f"{bot}_{device}.db").exists()

        # The bot goes away and comes back: same device, same keys, same sessions.
        await process.stop()
        await process.start()
        await process.logged(r"matrix transport online", within=WITHIN)
        assert bot_device(process, bot) == device

        answer = await owner.reply(room, "S3 please", question["event_id"])
        review = await bot_says(owner, room, bot, r"review approve")
        assert review["_decrypted"]
        assert process.phase("report") == "ready_for_deployment"
        card = process.card("report")
        assert [a["answer"] for a in json.loads(card["data"])["answers"]] == ["S3 please"]
        assert answer
        assert "cannot read" not in process.log_text(), "a message after the restart was unreadable"
    finally:
        await process.stop()


async def test_encrypted_reaction_answers_and_bot_reactions_are_encrypted(
    tmp_path: Path, servers, e2ee_peer
) -> None:
    turns = [
        {"match": "local disk", "answer": direct("light")},
        {
            "match": "OPERATOR-DECISION",
            "answer": operator_answer(
                {
                    "decision": "needs_human",
                    "reason": "unclear",
                    "human_action": "Which storage?\noptions: S3 | local disk",
                }
            ),
        },
        BUILD,
        APPROVE,
    ]
    owner = await e2ee_peer("owner")
    bot = bot_id(servers)
    process, room = await start_encrypted(tmp_path, servers, owner, turns, {"report": INTENT})
    try:
        await owner.say(room, "/start report")
        question = await bot_says(owner, room, bot, r"Which storage\?")
        await owner.react(room, question["event_id"], "2️⃣")
        await bot_says(owner, room, bot, r"review approve")
        answers = json.loads(process.card("report")["data"])["answers"]
        assert [a["answer"] for a in answers] == ["local disk"]
        # Nothing the bot posted in this room went out in clear.
        _, clear = await _any_clear_from(owner, room, bot)
        assert clear is None, f"the bot posted in clear: {clear}"
    finally:
        await process.stop()


async def _any_clear_from(peer: E2eePeer, room: str, bot: str) -> tuple[str, dict | None]:
    seen = []
    while not peer.inbox.empty():
        seen.append(peer.inbox.get_nowait())
    clear = [
        ev
        for r, ev in seen
        if r == room
        and ev.get("sender") == bot
        and ev.get("type") in ("m.room.message", "m.reaction")
        and not ev["_decrypted"]
    ]
    return room, clear[0] if clear else None


async def test_e2ee_verified_mode_refuses_until_the_owner_verifies_by_sas(
    tmp_path: Path, servers, e2ee_peer
) -> None:
    from nio import KeyVerificationKey, KeyVerificationMac

    owner = await e2ee_peer("owner")
    bot = bot_id(servers)
    process, room = await start_encrypted(
        tmp_path, servers, owner, [], {"report": INTENT}, trust="verified"
    )
    try:
        first = await owner.say(room, "/status")
        refusal = await bot_says(owner, room, bot, r"not verified")
        assert refusal["_decrypted"] and replied_to(refusal) == first
        assert owner.device_id in refusal["content"]["body"]

        # The owner verifies the bot's device by SAS; the bot shows its emoji in a
        # direct message, which the owner compares with its own.
        (device,) = await owner.devices_of(bot, bot_device(process, bot))
        await owner.client.start_key_verification(device)
        await owner.verification_event(KeyVerificationKey, within=WITHIN)
        sas = next(iter(owner.client.key_verifications.values()))
        mine = ", ".join(f"{symbol} {name}" for symbol, name in sas.get_emoji())
        dm = await asyncio.wait_for(owner.invites.get(), WITHIN)
        await owner.join(dm)
        shown = await bot_says(owner, dm, bot, r"Verifying your device")
        assert mine in shown["content"]["body"], (mine, shown["content"]["body"])
        await owner.client.confirm_short_auth_string(sas.transaction_id)
        await owner.verification_event(KeyVerificationMac, within=WITHIN)
        await bot_says(owner, dm, bot, r"is verified")

        second = await owner.say(room, "/status")
        answer = await bot_says(owner, room, bot, r"report")
        assert answer["_decrypted"] and replied_to(answer) == second
        assert "not verified" not in answer["content"]["body"]
    finally:
        await process.stop()


async def test_e2ee_verified_mode_takes_a_device_cross_signed_by_the_owner(
    tmp_path: Path, servers, e2ee_peer
) -> None:
    owner = await e2ee_peer("owner")
    bot = bot_id(servers)
    process, room = await start_encrypted(
        tmp_path, servers, owner, [], {"report": INTENT}, trust="verified"
    )
    try:
        first = await owner.say(room, "/status")
        await bot_says(owner, room, bot, r"not verified")
        master = await owner.cross_sign_own_device()
        second = await owner.say(room, "/status")
        answer = await bot_says(owner, room, bot, r"report")
        assert answer["_decrypted"] and replied_to(answer) == second != first
        # The owner's identity is pinned now: another master key would not count.
        pinned = process.query(
            "SELECT value FROM kv WHERE key = ?", (f"matrix:{bot}:master_key:{owner.user_id}",)
        )
        assert pinned[0]["value"] == master
    finally:
        await process.stop()


async def _status_without_its_key(owner, room: str, bot: str, process) -> tuple:
    """`/status report` sent with a room key the bot's device was not given; returns
    (the bot's device, the withheld key, the command's event id)."""
    # A first message sets up the Olm session between the two devices.
    await owner.say(room, "/help")
    try:
        await bot_says(owner, room, bot, r"Start with these:")
    except TimeoutError as error:
        raise AssertionError(
            f"{error}\nthe bot's log ends:\n{process.log_text()[-4000:]}"
        ) from None
    (device,) = await owner.devices_of(bot, bot_device(process, bot))
    key = await owner.withhold_from(room, device)
    return device, key, await owner.say(room, "/status report")


async def test_e2ee_missing_room_key_is_requested_said_once_and_handled_when_it_comes(
    tmp_path: Path, servers, e2ee_peer
) -> None:
    owner = await e2ee_peer("owner")
    bot = bot_id(servers)
    process, room = await start_encrypted(tmp_path, servers, owner, [], {"report": INTENT})
    try:
        device, key, first = await _status_without_its_key(owner, room, bot, process)
        second = await owner.say(room, "/runs")
        said = await bot_says(owner, room, bot, r"could not read")
        assert said["_decrypted"] and replied_to(said) == first
        request = await asyncio.wait_for(owner.key_requests.get(), WITHIN)
        assert request.session_id == key["session_id"] and request.sender == bot

        await owner.hand_over(key, device)
        status = await bot_says(owner, room, bot, r"report")
        runs = await bot_says(owner, room, bot, r"No run is queued or running")
        assert replied_to(status) == first and replied_to(runs) == second
        _, extra = await _told(owner, room, bot, "could not read")
        assert extra is None, "the bot said twice that it could not read"
    finally:
        await process.stop()


async def test_e2ee_unreadable_message_waits_across_a_restart_for_its_key(
    tmp_path: Path, servers, e2ee_peer
) -> None:
    owner = await e2ee_peer("owner")
    bot = bot_id(servers)
    process, room = await start_encrypted(tmp_path, servers, owner, [], {"report": INTENT})
    try:
        device, key, command = await _status_without_its_key(owner, room, bot, process)
        await bot_says(owner, room, bot, r"could not read")
        await process.stop()
        # The key comes while the bot is away; the message waited in its database.
        await owner.hand_over(key, device)
        await process.start()
        status = await bot_says(owner, room, bot, r"report")
        assert status["_decrypted"] and replied_to(status) == command
    finally:
        await process.stop()


async def test_check_says_per_room_whether_it_is_encrypted_and_readable(
    tmp_path: Path, servers, e2ee_peer
) -> None:
    owner = await e2ee_peer("owner")
    bot = bot_id(servers)
    public = servers.info["matrix"]["rooms"]["public"]["room_id"]
    process, room = await start_encrypted(
        tmp_path, servers, owner, [], {"report": INTENT}, extra_rooms=(public,)
    )
    try:
        await owner.say(room, "/status")
        await bot_says(owner, room, bot, r"report")
    finally:
        await process.stop()
    result = await in_thread("check", "--config", str(process.config), cwd=ROOT)
    out = result.stdout + result.stderr
    assert re.search(
        rf"room {re.escape(room)}: joined yes, can post yes, encrypted yes, can decrypt yes", out
    ), out
    assert re.search(rf"room {re.escape(public)}: joined yes, can post yes, encrypted no", out), out


async def test_encrypted_resend_after_a_crash_posts_once_and_reactions_are_encrypted(
    tmp_path: Path, servers, e2ee_peer, matrix_bot
) -> None:
    """The outbox sends a row again with its transaction id when it cannot know whether
    the first try arrived; encrypted anew, the server still posts it once."""
    from chatbot.transports.base import Room

    owner = await e2ee_peer("owner")
    bot = bot_id(servers)
    room = await owner.create_encrypted_room(invite=(bot,))
    transport, _ = await matrix_bot(rooms=(room,), crypto_store=str(tmp_path / "crypto"))
    await owner.until(lambda: bot in owner.client.rooms[room].users, within=WITHIN)
    target = Room("matrix", room)
    first = await transport.send(Outgoing(target, "exactly once", txn_id="outbox-row-7"))
    again = await transport.send(Outgoing(target, "exactly once", txn_id="outbox-row-7"))
    assert again == first
    posted = await bot_says(owner, room, bot, r"exactly once")
    assert posted["_decrypted"] and posted["event_id"] == first
    await transport.react(target, first, "👍")
    _, reaction = await owner.expect(
        lambda r, ev: r == room and ev.get("sender") == bot and ev.get("type") == "m.reaction",
        within=WITHIN,
    )
    assert reaction["_decrypted"]
    assert reaction["content"]["m.relates_to"]["event_id"] == first
    await transport.send(Outgoing(target, "the next one"))
    await bot_says(owner, room, bot, r"the next one")
    _, twice = await _told(owner, room, bot, "exactly once")
    assert twice is None, "the re-sent message was posted twice"


async def _told(peer: E2eePeer, room: str, bot: str, text: str) -> tuple[str, dict | None]:
    seen = []
    while not peer.inbox.empty():
        seen.append(peer.inbox.get_nowait())
    again = [
        ev
        for r, ev in seen
        if r == room
        and ev.get("sender") == bot
        and text in (ev.get("content") or {}).get("body", "")
    ]
    return room, again[0] if again else None
