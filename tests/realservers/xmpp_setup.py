"""Create the MUC rooms as the owner account.

The room creator becomes its owner and moderator, and a moderator sees real
JIDs even in a whois=moderators room; so the rooms must exist before the bot
first joins, or the hidden room would not hide anything from the bot.
"""

from __future__ import annotations

import asyncio
import logging

import slixmpp


def plain_tcp_client(jid: str, password: str) -> slixmpp.ClientXMPP:
    """A slixmpp client set up for Prosody on loopback without TLS (see REAL_SERVERS.md)."""
    client = slixmpp.ClientXMPP(jid, password)
    client.enable_direct_tls = False
    client.enable_starttls = False
    client.enable_plaintext = True
    client.register_plugin("xep_0045")
    client.plugin["feature_mechanisms"].unencrypted_scram = True
    return client


async def create_rooms(host: str, port: int, jid: str, password: str, rooms: list[str]) -> None:
    logging.getLogger("slixmpp").setLevel(logging.WARNING)
    client = plain_tcp_client(jid, password)
    started = asyncio.get_running_loop().create_future()
    client.add_event_handler("session_start", lambda _: started.done() or started.set_result(1))
    client.add_event_handler(
        "failed_auth", lambda _: started.done() or started.set_exception(RuntimeError("auth"))
    )
    client.connect(host, port)
    try:
        await asyncio.wait_for(started, 15)
        client.send_presence()
        for room in rooms:
            await client.plugin["xep_0045"].join_muc_wait(
                slixmpp.JID(room), "owner", maxstanzas=0, timeout=15
            )
    finally:
        await asyncio.wait_for(client.disconnect(wait=1), 5)
        sender = getattr(
            client, "_run_out_filters", None
        )  # see chatbot transports/xmpp/connection.py
        if sender is not None:
            sender.cancel()
