"""Fixture pieces for the end-to-end tests: a bot process plus owner clients in its room."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.integration.bot_process import (
    BotProcess,
    bot_config,
    prepare,
    wait_for_occupant,
    write_scenario,
)

BOT_NICK = "board"
WITHIN = 30.0


@dataclass
class Room:
    """The owner's view of the bot's XMPP room."""

    peer: Any
    room: str

    async def say(self, text: str) -> str:
        return await self.peer.say(self.room, text, room=True)

    async def reply(self, text: str, target: str) -> str:
        return await self.peer.reply(self.room, text, target, room=True)

    async def react(self, target: str, key: str) -> str:
        return await self.peer.react(self.room, target, {key}, room=True)

    async def bot_replies_to(self, message_id: str, within: float = WITHIN) -> Any:
        """The bot's answer to one of our messages (a reply pointing at it)."""
        return await self.peer.expect(
            lambda m: (
                m["type"] == "groupchat"
                and m["from"].resource == BOT_NICK
                and reply_target(m) == message_id
            ),
            within=within,
        )

    async def bot_says(self, pattern: str, within: float = WITHIN) -> Any:
        """The next message from the bot in the room whose body matches `pattern`."""
        regex = re.compile(pattern, re.S)
        return await self.peer.expect(
            lambda m: (
                m["type"] == "groupchat"
                and m["from"].resource == BOT_NICK
                and m.xml.find("{urn:xmpp:delay}delay") is None
                and bool(regex.search(m["body"]))
            ),
            within=within,
        )


def reply_target(message: Any) -> str | None:
    """The id a XEP-0461 reply points at, or None."""
    from chatbot.transports.xmpp import stanzas as wire

    element = message.xml.find(f"{{{wire.NS_REPLY}}}reply")
    return element.get("id") if element is not None else None


def stanza_id(message: Any, room: str) -> str:
    from chatbot.transports.xmpp import stanzas as wire

    sid = wire.trusted_stanza_id(message, room)
    assert sid, "the room gave the bot's message no stanza-id"
    return sid


async def start_bot(
    tmp_path: Path,
    servers_info: dict[str, Any],
    turns: list[dict[str, Any]],
    intents: dict[str, str],
    peer_factory: Callable,
    *,
    account: str = "owner",
    **config: Any,
) -> tuple[BotProcess, Room]:
    prepare(tmp_path, intents)
    write_scenario(tmp_path, turns)
    path = bot_config(tmp_path, servers_info, **config)
    room = servers_info["xmpp"]["rooms"]["public"]
    peer = await peer_factory(account)
    await peer.join(room, account)
    bot = await BotProcess(tmp_path, path).start()
    await wait_for_occupant(peer, room, BOT_NICK)
    # The nick may still be held by an earlier test's killed bot (its session hibernates):
    # the bot's own word that it joined and read the archives is what counts.
    await bot.logged(r"xmpp transport online", within=WITHIN)
    return bot, Room(peer, room)


async def bot_says_directly(peer: Any, bot_jid: str, pattern: str, within: float = WITHIN) -> Any:
    """The next direct (type chat) message from the bot whose body matches `pattern`."""
    regex = re.compile(pattern, re.S)
    return await peer.expect(
        lambda m: (
            m["type"] in ("chat", "normal")
            and m["from"].bare == bot_jid
            and bool(regex.search(m["body"]))
        ),
        within=within,
    )
