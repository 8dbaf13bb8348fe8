"""`[[routines]]` (config/routines.py): read and refused with the key and the fix; kept
on the board as the file says at each start (chat/routines.py keep_config_routines);
checked by `chatbot check` against the board; listed by `chatbot routines --json`."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest

from chatbot.app.check_routines import routine_lines
from chatbot.board import BoardService
from chatbot.chat.routines import keep_config_routines, rows_of_config
from chatbot.config import ConfigError, parse_config
from chatbot.domain.phases import Kind, Phase
from chatbot.store import Store
from chatbot.store import cards as card_store
from tests.board.test_config import MINIMAL
from tests.inprocess import chatbot

XMPP = """
[xmpp]
jid = "bot@example.org"
password_file = "pw"
rooms = ["board@conference.example.org", "ops@conference.example.org"]
"""
ROUTINE = """
[[routines]]
name = "weekly-deps"
every = "monday 09:00"
command = "/research deps"
owner = "owner@example.org"
timezone = "Europe/Berlin"
"""


def config(tmp_path: Path, routines: str = ROUTINE, bot: str = ""):
    (tmp_path / "pw").write_text("secret\n")
    text = MINIMAL.replace("[bot]\n", f"[bot]\n{bot}") + XMPP + routines
    return parse_config(text, tmp_path / "bot.toml")


@pytest.mark.parametrize(
    ("routines", "where", "fix"),
    [
        (ROUTINE.replace("monday 09:00", "61 * * * *"), "routines.weekly-deps.every", "0-59"),
        (ROUTINE.replace('every = "monday 09:00"', 'at = "tomorrow 02:00"'), ".at", "2026-12-24"),
        (ROUTINE + 'at = "2030-01-01 10:00"\n', "routines.weekly-deps", "exactly one"),
        (ROUTINE.replace("owner@example.org", "eve@example.org"), ".owner", "bot.owners"),
        (ROUTINE + 'room = "elsewhere@conference.example.org"\n', ".room", "none of the rooms"),
        (ROUTINE.replace("Europe/Berlin", "Mars/Base"), ".timezone", "IANA"),
        (ROUTINE + ROUTINE, "routines.weekly-deps", "another [[routines]]"),
        (ROUTINE.replace("/research deps", "research deps"), ".command", "as typed"),
    ],
)
def test_a_bad_routine_is_refused_naming_its_key_and_the_fix(
    tmp_path: Path, routines: str, where: str, fix: str
) -> None:
    with pytest.raises(ConfigError) as refused:
        config(tmp_path, routines)
    assert where in str(refused.value) and fix in str(refused.value)


def test_a_bad_bot_timezone_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="bot.timezone"):
        config(tmp_path, bot='timezone = "Nowhere/Town"\n')


def test_a_routine_answers_in_its_room_or_the_owners_first(tmp_path: Path) -> None:
    found = config(
        tmp_path,
        ROUTINE
        + 'room = "ops@conference.example.org"\n'
        + ROUTINE.replace("weekly-deps", "second"),
        bot='timezone = "Europe/Berlin"\n',
    )
    first, second = rows_of_config(found, 0.0)
    assert (first.transport, first.target, first.source) == (
        "xmpp",
        "ops@conference.example.org",
        "config",
    )
    assert second.target == "board@conference.example.org"
    assert first.owner == "xmpp:owner@example.org" and first.cron == "0 9 * * 1"


async def test_the_board_keeps_the_configuration_s_routines(tmp_path: Path) -> None:
    store = await Store.open(tmp_path / "board.sqlite3")
    try:
        board = BoardService(store, tmp_path)
        (made,) = await keep_config_routines(board, config(tmp_path))
        await board.routines.set_state(made.id, "paused", "by owner")
        # The same file again: kept as it was, the pause too.
        (kept,) = await keep_config_routines(board, config(tmp_path))
        assert (kept.id, kept.state) == (made.id, "paused")
        changed = config(tmp_path, ROUTINE.replace("monday", "tuesday"))
        (moved,) = await keep_config_routines(board, changed)
        assert (moved.id, moved.cron) == (made.id, "0 9 * * 2")
        assert await keep_config_routines(board, config(tmp_path, "")) == []
        assert await board.routines.listed() == []
    finally:
        await store.close()


async def test_check_reads_each_routine_against_the_board(tmp_path: Path) -> None:
    found = config(tmp_path)
    assert found.bot.sqlite_file is not None
    store = await Store.open(found.bot.sqlite_file)
    async with store.transaction() as db:
        await card_store.create(db, "deps", Kind.RESEARCH, Phase.PLANNED, actor="t", title="d")
    await store.close()
    (line,) = await routine_lines(found, connect=False)
    assert line[1] and line[0].startswith("routine weekly-deps: /research deps monday 09:00")
    missing = config(tmp_path, ROUTINE.replace("/research deps", "/start nothing-here"))
    (line,) = await routine_lines(missing, connect=False)
    assert not line[1] and "no card 'nothing-here'" in line[0]
    wrong = config(tmp_path, ROUTINE.replace("/research deps", "/status"))
    (line,) = await routine_lines(wrong, connect=False)
    assert not line[1] and "/start, /draft, /research, /inspect" in line[0]


async def _owner_zone(database: Path, owner: str, zone: str) -> None:
    async with await Store.open(database) as store:
        await BoardService(store, database.parent).routines.set_owner_zone(owner, zone)


def test_chatbot_routines_json_lists_them_with_their_next_time(tmp_path: Path) -> None:
    config(tmp_path)  # the secret file
    text = MINIMAL.replace("[bot]\n", '[bot]\ntimezone = "America/Chicago"\n') + XMPP + ROUTINE
    (tmp_path / "bot.toml").write_text(text)
    (tmp_path / "repo").mkdir()
    database = parse_config(text, tmp_path / "bot.toml").bot.database
    database.parent.mkdir(parents=True, exist_ok=True)
    with asyncio.Runner() as runner:
        runner.run(_owner_zone(database, "xmpp:owner@example.org", "Asia/Tokyo"))
    done = chatbot("--config", str(tmp_path / "bot.toml"), "routines", "--json")
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    (routine,) = document["routines"]
    assert routine["name"] == "weekly-deps" and routine["command"] == "/research deps"
    assert re.fullmatch(r"Mon \d{4}-\d\d-\d\d 09:00 CES?T", routine["next_local"])
    assert document["runs_by_outcome"] == {}
    # The zone a new routine reads its time in: an owner's own (/timezone), else the config's.
    assert document["owner_timezones"] == {"xmpp:owner@example.org": "Asia/Tokyo"}
    assert document["default_timezone"] == "America/Chicago"
