"""Upgrades never brick (issue 28): every configuration an earlier release shipped still
starts the bot; what it set that is no longer used is named, with what replaces it,
in the log, in `chatbot check` and once in the rooms."""

from __future__ import annotations

import asyncio
import logging
import re
from pathlib import Path

import pytest

from chatbot.app import demo
from chatbot.config import ConfigError, load_config, parse_config
from chatbot.config.deprecated import REMOVED, REMOVED_IN, Deprecated
from chatbot.notify import deprecations
from chatbot.notify.notifier import Destination, Notifier
from chatbot.store import Store
from chatbot.store import chat as chat_store
from tests.board.earlier_configs import from_history, kept
from tests.board.test_init_and_check import chatbot
from tests.demo.serving import serving

OLD_FIXER = '\nmodel = "gpt-5-codex"\nreasoning_effort = "high"\ntimeout_s = 1800\n'


def earlier() -> list[dict[str, str]]:
    found = {**kept(), **from_history()}
    return sorted(found.values(), key=lambda e: (e["date"], e["commit"]))


def test_the_kept_examples_reach_back_to_the_first_release() -> None:
    entries = earlier()
    # The first commit's example, and the ones with the [roles.fixer] profile since removed.
    assert len(entries) >= 29 and entries[0]["commit"].startswith("2ed8c25")
    assert sum("[roles.fixer]\nruntime" in e["text"] for e in entries) >= 14


@pytest.mark.parametrize("entry", earlier(), ids=lambda e: f"{e['date']}-{e['commit'][:8]}")
def test_every_earlier_example_configuration_still_loads(entry, tmp_path: Path) -> None:
    file = tmp_path / "bot.toml"
    file.write_text(entry["text"])
    config = parse_config(entry["text"], file, secrets=False)
    table = {removed.key for removed in REMOVED}
    assert {found.key for found in config.deprecated} <= table
    # The deprecated keys are ignored, not half-applied: the fixer keeps the lane's profile.
    assert not config.role("fixer").model_fields_set - {"approvals"}


def _initialised(tmp_path: Path, fixer: str) -> Path:
    made = chatbot("init", str(tmp_path / "bot"))
    assert made.returncode == 0, made.stderr
    config = tmp_path / "bot" / "bot.toml"
    text = config.read_text()
    assert "[roles.fixer]\n" in text
    config.write_text(text.replace("[roles.fixer]\n", "[roles.fixer]" + fixer, 1))
    return config


def test_check_lists_the_deprecated_keys_and_passes(tmp_path: Path) -> None:
    config = _initialised(tmp_path, OLD_FIXER)
    checked = chatbot("check", "--config", str(config), "--no-connect")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    out = checked.stdout
    assert "deprecated (the bot starts; edit the file):" in out
    for key in ("model", "reasoning_effort", "timeout_s"):
        assert f"  - roles.fixer.{key} is deprecated since 0.1.0 and ignored: " in out
        assert f"set it in [lanes.<name>] {key}" in out
    assert f"(from {REMOVED_IN} it stops the bot)" in out


def test_the_log_names_each_deprecated_key_and_its_replacement(tmp_path: Path, caplog) -> None:
    config = _initialised(tmp_path, OLD_FIXER)
    with caplog.at_level(logging.WARNING, logger="chatbot.config"):
        load_config(config)
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 3
    assert all(str(config) in line and "[lanes.<name>]" in line for line in lines)


def test_a_misspelt_key_is_still_refused_with_the_key_it_meant(tmp_path: Path) -> None:
    config = _initialised(tmp_path, '\nmodle = "gpt-5-codex"\n')
    with pytest.raises(ConfigError, match="roles.fixer.modle"):
        load_config(config)
    checked = chatbot("check", "--config", str(config), "--no-connect")
    assert checked.returncode == 2


def test_a_key_not_in_the_table_still_says_why_it_is_refused(tmp_path: Path) -> None:
    # [roles.builder] never took a profile: nothing to keep accepting.
    config = tmp_path / "bot" / "bot.toml"
    _initialised(tmp_path, "\n")
    text = config.read_text().replace("[roles.builder]\n", '[roles.builder]\nmodel = "x"\n', 1)
    config.write_text(text)
    with pytest.raises(ConfigError, match="the builder runs with the card's lane"):
        load_config(config)


@pytest.fixture
async def notifier(tmp_path: Path):
    store = await Store.open(tmp_path / "b.sqlite3")
    room = Destination("xmpp", "ops@muc", owners=("owner@example.org",))
    yield Notifier(store, [room], "en")
    await store.close()


async def _posted(notifier: Notifier) -> list[chat_store.OutboxRow]:
    rows = await chat_store.pending(notifier.store.reader, "xmpp")
    return [row for row in rows if row.purpose == "deprecated"]


async def test_the_owners_are_told_once_per_set_of_keys(notifier: Notifier) -> None:
    model = ("roles.fixer.model", "roles.fixer.model is deprecated ...")
    assert await deprecations.tell_owners(notifier, [model])
    [told] = await _posted(notifier)
    assert told.mentions == ("owner@example.org",)
    assert (
        "uses 1 deprecated key;" in told.text and "- roles.fixer.model is deprecated" in told.text
    )
    # A restart with the same file: not again.
    assert not await deprecations.tell_owners(notifier, [model])
    # Another key appears: the set is news again.
    effort = ("roles.fixer.reasoning_effort", "roles.fixer.reasoning_effort is deprecated ...")
    assert await deprecations.tell_owners(notifier, [model, effort])
    assert len(await _posted(notifier)) == 2
    # The file is mended, then an old key comes back: told again.
    assert not await deprecations.tell_owners(notifier, [])
    assert await deprecations.tell_owners(notifier, [model])
    assert len(await _posted(notifier)) == 3


async def test_agents_without_a_sandbox_are_told_once(notifier: Notifier) -> None:
    # issue 32: `[bot] sandbox = "off"` runs agents unconfined on purpose; the rooms hear
    # it once, naming the lanes with no protection of their own, and again if it changes.
    assert not await deprecations.tell_unconfined(notifier, "auto", ["g"])
    assert not await deprecations.tell_unconfined(notifier, "off", [])  # codex, claude
    assert await deprecations.tell_unconfined(notifier, "off", ["g"])
    rows = await chat_store.pending(notifier.store.reader, "xmpp")
    [told] = [row for row in rows if row.purpose == "sandbox_off"]
    assert (
        "without the bot's sandbox" in told.text and "protection of its own either: g." in told.text
    )
    assert told.mentions == ("owner@example.org",)
    assert not await deprecations.tell_unconfined(notifier, "off", ["g"])  # a restart
    assert await deprecations.tell_unconfined(notifier, "off", ["g", "h"])


async def test_the_notice_in_german(notifier: Notifier) -> None:
    notifier.locale = "de"
    assert await deprecations.tell_owners(notifier, [("roles.fixer.model", "…")])
    [told] = await _posted(notifier)
    assert told.text.startswith("⚠️ Die Konfiguration nutzt 1 veralteten Schlüssel;")


async def _serve_demo(tmp_path: Path, deprecated: tuple[Deprecated, ...]) -> list[str]:
    """The console demo with `deprecated` as if read from its file, served until it
    answered /status: what the console showed."""
    config = demo.config(tmp_path).model_copy(update={"deprecated": deprecated})
    seen: list[str] = []
    async with serving(config) as (console, _):
        await console.push("/status")
        async with asyncio.timeout(30):
            while not seen or not re.search(r"^\d+ cards", seen[-1]):
                seen.append((await console.pop(30)).text)
    return seen


async def test_the_running_bot_tells_the_owners_once(tmp_path: Path) -> None:
    found = (Deprecated("roles.fixer.model", "0.1.0", "set it in [lanes.<name>] model"),)
    first = await _serve_demo(tmp_path, found)
    told = [line for line in first if line.startswith("⚠️ The configuration uses")]
    assert len(told) == 1 and "roles.fixer.model is deprecated since 0.1.0" in told[0]
    # Restarted with the same file: the owners heard it already.
    again = await _serve_demo(tmp_path, found)
    assert not any(line.startswith("⚠️ The configuration") for line in again), again
