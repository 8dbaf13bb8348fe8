"""Setup in minutes (issue 34): `chatbot init --xmpp | --matrix` writes a short
configuration that checks out once its secrets are filled in; init never changes an
existing one; `chatbot check` says what to fill in first; a new database says one line.

Each runs the real command's `main` as a new user would call it (tests/inprocess.py).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from chatbot.config import load_config
from chatbot.store.migrations import LATEST
from tests.board.test_init_and_check import chatbot

SECRETS = {"xmpp": {"xmpp-password"}, "matrix": {"matrix-password", "matrix-store-key"}}
OTHER = {"xmpp": "matrix", "matrix": "xmpp"}


def made(tmp_path: Path, network: str, *args: str) -> Path:
    done = chatbot("init", f"--{network}", *args, str(tmp_path / "bot"))
    assert done.returncode == 0, done.stdout + done.stderr
    return tmp_path / "bot" / "bot.toml"


def fill_in(config: Path) -> None:
    """What the user does next: the real secrets into the files init wrote."""
    for secret in (config.parent / "secrets").iterdir():
        if secret.read_text().startswith("PLACEHOLDER"):
            secret.write_text("the real secret\n")


def snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {
        str(path.relative_to(folder)): (path.read_bytes(), path.stat().st_mtime_ns)
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


@pytest.mark.parametrize("network", ["xmpp", "matrix"])
def test_init_for_one_network_is_short_and_checks_out_once_filled_in(
    tmp_path: Path, network: str
) -> None:
    config = made(tmp_path, network)
    text = config.read_text()
    lines = len(text.splitlines())
    print(f"chatbot init --{network}: bot.toml has {lines} lines")
    assert lines <= 40, text
    active = [line for line in text.splitlines() if line and not line.startswith("#")]
    assert f"[{network}]" in active and f"[{OTHER[network]}]" not in text
    assert "[deploy]" not in text and "127.0.0.1" not in text and "localhost" not in text
    assert "openrouter" not in text and "[web]" not in text
    secrets = config.parent / "secrets"
    assert {path.name for path in secrets.iterdir()} == SECRETS[network]
    assert {path.stat().st_mode & 0o777 for path in secrets.iterdir()} == {0o600}

    fill_in(config)
    loaded = load_config(config)
    assert loaded.transports == [network] and loaded.deploy is None and loaded.web is None
    if network == "xmpp":
        assert loaded.xmpp is not None and loaded.xmpp.host is None  # found from the JID
    checked = chatbot("check", "--config", str(config), "--no-connect")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    todo = checked.stdout.split("configuration OK")[0]
    assert "still holds a placeholder" not in todo
    assert "bot.owners:" in todo  # the example owner is still to be replaced


def test_init_takes_the_owner_and_an_existing_repository(tmp_path: Path) -> None:
    repo = tmp_path / "app"
    (repo / "docs" / "intent").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    config = made(tmp_path, "matrix", "--owner", "@alice:example.net", "--repo", str(repo))
    assert not (tmp_path / "bot" / "repo").exists()  # the named one is used, none made
    fill_in(config)
    loaded = load_config(config)
    assert loaded.bot.owners == ["@alice:example.net"] and loaded.bot.repo == repo
    checked = chatbot("check", "--config", str(config), "--no-connect")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "bot.owners:" not in checked.stdout
    assert f"repository: {repo}: 0 intent files" in checked.stdout


def test_init_says_when_the_repository_has_no_intent_folder_yet(tmp_path: Path) -> None:
    repo = tmp_path / "app"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    done = chatbot("init", "--xmpp", "--repo", str(repo), str(tmp_path / "bot"))
    assert done.returncode == 0, done.stderr
    assert f"note: {repo} has no docs/intent/ yet" in done.stdout
    assert not (repo / "docs").exists()  # the user's repository is theirs to change


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--xmpp", "--owner", "@alice:example.net"], "is not a bare JID (name@server)"),
        (["--xmpp", "--owner", "alice@example.net/phone"], "is not a bare JID (name@server)"),
        (["--matrix", "--owner", "alice@example.net"], "is not a Matrix user id (@name:server)"),
        (["--owner", "alice"], "--owner 'alice' is not"),
        (["--xmpp", "--repo", "{tmp}/missing"], "no such folder"),
        (["--matrix", "--repo", "{tmp}"], "not a git repository (git init it, or name another)"),
    ],
)
def test_a_wrong_owner_or_repository_is_one_line_and_writes_nothing(
    tmp_path: Path, args: list[str], said: str
) -> None:
    args = [arg.replace("{tmp}", str(tmp_path)) for arg in args]
    done = chatbot("init", *args, str(tmp_path / "bot"))
    assert done.returncode == 2, done.stdout + done.stderr
    assert len(done.stderr.splitlines()) == 1 and said in done.stderr, done.stderr
    assert not (tmp_path / "bot").exists()


def test_init_onto_an_existing_configuration_is_one_line_and_changes_nothing(
    tmp_path: Path,
) -> None:
    config = made(tmp_path, "xmpp")
    fill_in(config)
    before = snapshot(tmp_path)
    for args in (["--xmpp"], ["--matrix"], [], ["--xmpp", "--owner", "a@example.net"]):
        done = chatbot("init", *args, str(tmp_path / "bot"))
        assert done.returncode == 2, (args, done.stdout + done.stderr)
        assert done.stderr == f"chatbot: {config} exists already; nothing was written " + (
            "(edit it instead)\n"
        )
    onto_the_file = chatbot("init", "--xmpp", str(config))
    assert onto_the_file.returncode == 2
    assert onto_the_file.stderr == (
        f"chatbot: {config} is a file, not a folder: init writes DIR/bot.toml\n"
    )
    assert snapshot(tmp_path) == before


def test_init_without_a_network_still_writes_the_whole_example(tmp_path: Path) -> None:
    # An upgrade never bricks: scripts that ran `chatbot init DIR` get what they got,
    # minus what pointed somewhere by itself (a loopback XMPP host, a deploy command).
    done = chatbot("init", str(tmp_path / "bot"))
    assert done.returncode == 0, done.stderr
    assert "`chatbot init --xmpp DIR` or `--matrix DIR` writes a short one" in done.stdout
    text = (tmp_path / "bot" / "bot.toml").read_text()
    assert "[xmpp]\n" in text and "[matrix]\n" in text and len(text.splitlines()) > 200
    assert "\n# host = " in text and "\nhost = " not in text and "\n[deploy]" not in text


def test_check_says_what_to_fill_in_first_and_the_config_only_when_asked(
    tmp_path: Path,
) -> None:
    config = made(tmp_path, "xmpp")
    out = chatbot("check", "--config", str(config), "--no-connect").stdout
    assert out.splitlines()[0] == "to fill in:", out
    assert "xmpp.password_file:" in out.split("configuration OK")[0]
    assert (
        '"owners": [' not in out and "resolved configuration: `chatbot check --show-config`" in out
    )
    print(f"check --no-connect: {len(out.splitlines())} lines")

    # A problem comes right after the list, before what is fine; the exit code is as before.
    config.write_text(re.sub(r'binary = "[^"]*"', 'binary = "no-such-codex"', config.read_text()))
    broken = chatbot("check", "--config", str(config), "--no-connect")
    assert broken.returncode == 1
    blocks = [line for line in broken.stdout.splitlines() if not line.startswith(" ")]
    assert blocks[:3] == ["to fill in:", "problems:", f"configuration OK: {config}"], blocks
    assert "  - runtime codex: no-such-codex NOT found" in broken.stdout

    shown = chatbot("check", "--config", str(config), "--no-connect", "--show-config")
    assert shown.returncode == 1  # the same verdict, only more said
    resolved = shown.stdout.split("resolved configuration:\n")[1]
    assert resolved.startswith("{") and '"owners": [' in resolved
    assert str(config.parent / "secrets" / "xmpp-password") in resolved
    assert "PLACEHOLDER" not in shown.stdout  # a secret file by its path, never its content


def test_the_first_command_on_a_new_database_says_one_line_of_its_schema(
    tmp_path: Path,
) -> None:
    config = made(tmp_path, "xmpp")
    fill_in(config)
    first = chatbot("cards", "--config", str(config))
    assert first.returncode == 0, first.stderr
    steps = [line for line in first.stderr.splitlines() if "schema step" in line]
    assert len(steps) == 1 and steps[0].endswith(f"created at schema step {LATEST}"), steps
    shutil.rmtree(config.parent / "var")
    verbose = chatbot("cards", "-v", "--config", str(config))
    steps = [line for line in verbose.stderr.splitlines() if "schema step" in line]
    assert len(steps) == LATEST + 1 and " DEBUG " in steps[0] and " INFO " in steps[-1]
