"""The chat networks as records: one table the rest of the bot asks instead of names.

- every record lives where its `home` says, and its name is written as text only there;
- identities: each configured owner belongs to exactly one network, compared in its form;
- rendering: HTML beside the text where the record says so, plain elsewhere;
- a network's library is loaded only when its section is configured (fresh interpreter).
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from chatbot.app.check import describe
from chatbot.app.wiring import destinations, settings_for
from chatbot.config import parse_config
from chatbot.config.bot import identity_problem
from chatbot.notify.format import html_for
from chatbot.transports.base import Identity, ProbeReport, RoomReport
from chatbot.transports.network import Rendering
from chatbot.transports.networks import CONSOLE, MATRIX, NETWORKS, XMPP, claiming, homes, normal

ROOT = Path(__file__).resolve().parents[2]
LIBRARIES = {"xmpp": "slixmpp", "matrix": "nio"}

BASE = """
[bot]
owners = ["Owner@Example.org", "@owner:example.org"]
repo = "repo"
[runtimes.codex]
binary = "codex"
[lanes.light]
runtime = "codex"
model = "gpt-5-codex-mini"
iteration_limit = 10
"""
XMPP_SECTION = """
[xmpp]
jid = "board@example.org"
password_file = "secret"
rooms = ["board@conference.example.org"]
"""
MATRIX_SECTION = """
[matrix]
homeserver = "http://127.0.0.1:8008"
user_id = "@board:example.org"
password_file = "secret"
rooms = ["#board:example.org"]
"""


def test_each_record_is_what_its_home_exports() -> None:
    assert list(NETWORKS) == ["xmpp", "matrix", "console"]
    for name, home in homes().items():
        assert importlib.import_module(home).NETWORK is NETWORKS[name]


def module_of(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@pytest.mark.parametrize(
    ("value", "network"),
    [
        ("owner@example.org", "xmpp"),
        ("Owner@Example.org/phone", "xmpp"),
        ("owner", "xmpp"),
        ("@owner:example.org", "matrix"),
        ("@", "matrix"),
    ],
)
def test_each_configured_identity_belongs_to_exactly_one_network(value, network) -> None:
    assert [n.name for n in NETWORKS.values() if n.claims(value)] == [network]
    assert claiming(value) is NETWORKS[network]
    assert not CONSOLE.claims(value)


def test_identities_are_compared_in_their_networks_form() -> None:
    assert normal(Identity("xmpp", "Owner@Example.org/phone")) == Identity(
        "xmpp", "owner@example.org"
    )
    # Matrix ids are lower case by grammar, the console's person free text: as they are.
    assert normal(Identity("matrix", "@Owner:example.org")) == Identity(
        "matrix", "@Owner:example.org"
    )
    assert normal(Identity("console", "Owner@X")) == Identity("console", "Owner@X")
    assert normal(Identity("irc", "Nick")) == Identity("irc", "Nick")


def test_config_asks_the_networks_what_an_identity_looks_like() -> None:
    assert identity_problem("owner@example.org") is None
    assert identity_problem("@owner:example.org") is None
    assert identity_problem("owner") == "not a bare JID (name@server)"
    assert identity_problem("@Owner:example.org") == "not a Matrix user id (@name:server)"
    assert XMPP.identity_problem("a@b/c") is not None


def test_html_goes_where_the_record_says_it_is_shown() -> None:
    assert [n.name for n in NETWORKS.values() if n.rendering is Rendering.HTML] == ["matrix"]
    assert html_for("matrix", "**done**") == "<p><strong>done</strong></p>\n"
    assert html_for("xmpp", "**done**") is None
    assert html_for("console", "**done**") is None
    assert html_for("elsewhere", "**done**") is None


def test_rooms_and_their_owners_come_from_each_networks_section(tmp_path: Path) -> None:
    (tmp_path / "secret").write_text("pw\n")
    config = parse_config(BASE + XMPP_SECTION + MATRIX_SECTION, tmp_path / "bot.toml")
    assert config.transports == ["xmpp", "matrix"]
    found = [(d.transport, d.room, d.owners) for d in destinations(config)]
    assert found == [
        ("xmpp", "board@conference.example.org", ("Owner@Example.org",)),
        ("matrix", "#board:example.org", ("@owner:example.org",)),
    ]


def test_the_crypto_store_has_a_home_with_postgresql_too(tmp_path: Path) -> None:
    """Beside the SQLite file by default; a PostgreSQL board has no file, so beside this
    host's workspaces (before, the bot crashed at start reading the URL's parent)."""
    (tmp_path / "secret").write_text("pw\n")
    postgres = BASE.replace(
        'repo = "repo"', 'repo = "repo"\ndatabase = "postgresql://board@127.0.0.1/board"'
    )
    for text, home in (
        (BASE, tmp_path / "var"),
        (postgres, tmp_path / "var"),
    ):
        config = parse_config(text + MATRIX_SECTION, tmp_path / "bot.toml")
        settings = settings_for(config, MATRIX)
        assert Path(settings.crypto_store) == home / "matrix-crypto"


def test_check_says_each_networks_own_room_facts() -> None:
    xmpp = ProbeReport(
        "xmpp", "b@x", True, True, (RoomReport("r@c.x", True, True, sees_real_ids=False),)
    )
    assert describe(xmpp)[1] == (
        "  room r@c.x: joined yes, can post yes, sees real JIDs NO"
        " (nothing said there can count as an owner's)"
    )
    room = RoomReport("#r:x", True, True, sees_real_ids=True, encrypted=True, can_decrypt=False)
    assert describe(ProbeReport("matrix", "@b:x", True, True, (room,)))[1] == (
        "  room #r:x: joined yes, can post yes, encrypted yes, can decrypt NO"
    )
    gone = RoomReport("#r:x", False, detail="join refused: forbidden")
    assert describe(ProbeReport("matrix", "@b:x", True, True, (gone,)))[1] == (
        "  room #r:x: joined NO, can post unknown — join refused: forbidden"
    )


# Builds the configured transports (without starting them) and says what got imported.
BUILD = """
import asyncio, json, sys
from pathlib import Path
from chatbot.app.wiring import build_transports
from chatbot.config import load_config
from chatbot.transports.base import MemoryStateStore

async def main():
    return sorted(build_transports(load_config(Path(sys.argv[1])), MemoryStateStore()))

built = asyncio.run(main())
roots = sorted({name.split(".")[0] for name in sys.modules})
print(json.dumps({"built": built, "roots": roots}))
"""


@pytest.mark.parametrize("network", [XMPP, MATRIX], ids=lambda n: n.name)
def test_a_networks_library_is_loaded_only_with_its_section(tmp_path: Path, network) -> None:
    (tmp_path / "secret").write_text("pw\n")
    section = XMPP_SECTION if network is XMPP else MATRIX_SECTION
    (tmp_path / "bot.toml").write_text(BASE + section)
    done = subprocess.run(
        [sys.executable, "-c", BUILD, str(tmp_path / "bot.toml")],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.splitlines()[-1])
    assert found["built"] == [network.name]
    loaded = {name for name, library in LIBRARIES.items() if library in found["roots"]}
    assert loaded == {network.name}
