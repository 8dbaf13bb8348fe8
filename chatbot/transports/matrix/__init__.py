"""Matrix through matrix-nio, end-to-end encryption included, and the record the bot asks.

The transport is in `transport.py` (incoming) and `outgoing.py`, the wire format in
`events.py`, the login in `session.py`, encryption in `crypto.py`, `verify.py` (SAS
emoji) and `cross_signing.py`, the crypto store's passphrase in `store_key.py`, and
`chatbot check` in `probe.py`. This file imports
none of them (nor nio): its builders do, when called.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..base import StateStore
from ..network import Network, Rendering, Setup, Starter
from ..reports import ProbeReport, RoomReport, yes_no

if TYPE_CHECKING:
    from .session import MatrixSettings
    from .transport import MatrixTransport

TRANSPORT = "matrix"
#: A user id: lower case by grammar, so it is compared as written.
USER_ID = r"^@[a-z0-9._=/+-]+:[A-Za-z0-9.-]+(:\d+)?$"


def _claims(value: str) -> bool:
    return value.startswith("@")


def _room_facts(room: RoomReport) -> str:
    if not room.joined:
        return ""
    # Not being encrypted is no fault, so no capitals for it.
    facts = f", encrypted {yes_no(room.encrypted).lower()}"
    if room.encrypted:
        facts += f", can decrypt {yes_no(room.can_decrypt)}"
    return facts


def _settings(setup: Setup) -> MatrixSettings:
    from .session import MatrixSettings

    section = setup.section
    secret = setup.secret
    # The crypto store: as configured, else a folder beside the board's database.
    store = section.crypto_store or setup.state_dir / "matrix-crypto"
    return MatrixSettings(
        homeserver=section.homeserver,
        user_id=section.user_id,
        password=secret(section.password_file) if section.password_file else None,
        access_token=secret(section.access_token_file) if section.access_token_file else None,
        rooms=tuple(section.rooms),
        owners=setup.owners,
        device_name=section.device_name,
        crypto_store=str(store),
        trust=section.trust,
        pickle_key=secret(section.store_key_file) if section.store_key_file else None,
    )


def _build(settings: MatrixSettings, state: StateStore) -> MatrixTransport:
    from .transport import MatrixTransport

    return MatrixTransport(settings, state)


def _keys_at_rest(settings: MatrixSettings) -> list[tuple[str, bool]]:
    from .store_key import keys_at_rest

    return keys_at_rest(settings.crypto_store, settings.user_id, settings.pickle_key)


async def _probe(settings: MatrixSettings, state: StateStore | None) -> ProbeReport:
    from .probe import probe_matrix

    return await probe_matrix(settings, state)


STARTER = Starter(
    title="Matrix",
    owner_example="@owner:example.org",
    owners_words="Matrix user ids (@name:server); display names never count",
    section="""[matrix]
homeserver = "https://matrix.example.org"
user_id = "@board:example.org"
password_file = "secrets/matrix-password"
rooms = ["#board:example.org"]
# The passphrase of the end-to-end encryption keys (init made it): back it up.
store_key_file = "secrets/matrix-store-key"
""",
)


NETWORK = Network(
    name=TRANSPORT,
    home=__name__,
    section="matrix",
    rendering=Rendering.HTML,
    sends_files=True,
    takes_files=True,
    identity_pattern=USER_ID,
    identity_words="a Matrix user id (@name:server)",
    claims=_claims,
    room_facts=_room_facts,
    settings=_settings,
    build=_build,
    probe=_probe,
    keys_at_rest=_keys_at_rest,
    starter=STARTER,
)
