"""XMPP through slixmpp: direct chats and MUC rooms, and the record the bot asks.

The transport is in `transport.py`, the wire format in `stanzas.py` (in) and
`outgoing.py` (out), the stream in `connection.py`, rooms in `rooms.py`, the
message archive in `archive.py` and `chatbot check` in `probe.py`. This file
imports none of them (nor slixmpp): its builders do, when called.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..base import StateStore
from ..network import Network, Rendering, Setup, Starter
from ..reports import ProbeReport, RoomReport, yes_no

if TYPE_CHECKING:
    from .connection import XmppSettings
    from .transport import XmppTransport

TRANSPORT = "xmpp"
#: A bare JID (no resource); rooms are written the same way.
BARE_JID = r"^[^@/\s]+@[^@/\s]+$"


def _claims(value: str) -> bool:
    # A JID begins with its local part; a leading "@" is a Matrix user id's sigil.
    return not value.startswith("@")


def _bare(jid: str) -> str:
    # Local part and domain are case-insensitive (slixmpp hands us them prepared,
    # but configuration is typed by people); a resource never belongs to the identity.
    return jid.split("/", 1)[0].lower()


def _room_facts(room: RoomReport) -> str:
    facts = f", sees real JIDs {yes_no(room.sees_real_ids)}"
    if room.sees_real_ids is False:
        facts += " (nothing said there can count as an owner's)"
    return facts


def _settings(setup: Setup) -> XmppSettings:
    from .connection import XmppSettings

    section = setup.section
    return XmppSettings(
        jid=section.jid,
        password=setup.secret(section.password_file),
        host=section.host,
        port=section.port,
        rooms=tuple(section.rooms),
        nick=section.nick,
        tls=section.tls,
        ca_certs=str(section.ca_certs) if section.ca_certs else None,
        max_stanza_bytes=section.max_stanza_bytes,
        upload_hosts=tuple(section.upload_hosts),
        file_domains=tuple(sorted({owner.rsplit("@", 1)[-1].lower() for owner in setup.owners})),
    )


def _build(settings: XmppSettings, state: StateStore) -> XmppTransport:
    from .transport import XmppTransport

    return XmppTransport(settings, state)


async def _probe(settings: XmppSettings, state: StateStore | None) -> ProbeReport:
    from .probe import probe_xmpp

    return await probe_xmpp(settings)


# Nothing on localhost: with only the JID, the server is found from its domain.
STARTER = Starter(
    title="XMPP",
    owner_example="owner@example.org",
    owners_words="bare JIDs (name@server); nicknames never count",
    section="""[xmpp]
jid = "board@example.org"
password_file = "secrets/xmpp-password"
# Rooms must show every occupant's real JID (non-anonymous); direct chats work too.
rooms = ["board@conference.example.org"]
# The server is found from the JID's domain; set host only when it is elsewhere.
# host = "xmpp.example.org"
""",
)


NETWORK = Network(
    name=TRANSPORT,
    home=__name__,
    section="xmpp",
    rendering=Rendering.PLAIN,
    sends_files=True,
    takes_files=True,
    identity_pattern=BARE_JID,
    identity_words="a bare JID (name@server)",
    claims=_claims,
    normalise=_bare,
    room_facts=_room_facts,
    settings=_settings,
    build=_build,
    probe=_probe,
    starter=STARTER,
)
