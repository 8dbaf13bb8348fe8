"""Keys at rest, from the command line: `chatbot init`, `chatbot check`, a missing key.

- `init` makes the Matrix crypto store's passphrase itself (random, owner-only) and
  the example configuration names it, so a new bot never runs on nio's default;
- `check` warns (and passes) while the store is on nio's default passphrase, and for
  every secret file group or others can read, with the `chmod` that mends it;
- a store key file that is configured but missing stops the bot (exit 2), named.
"""

from __future__ import annotations

from pathlib import Path

from tests.board.test_init_and_check import chatbot

KEY_LINE = 'store_key_file = "secrets/matrix-store-key"\n'
DEFAULT_WARNING = (
    "warning: the Matrix crypto store is pickled with nio's default passphrase; "
    "set [matrix] store_key_file (chatbot init makes one)"
)


def made(tmp_path: Path) -> tuple[Path, Path]:
    done = chatbot("init", str(tmp_path / "bot"))
    assert done.returncode == 0, done.stderr
    return tmp_path / "bot" / "bot.toml", tmp_path / "bot" / "secrets" / "matrix-store-key"


def check(config: Path) -> tuple[int, str]:
    out = chatbot("check", "--config", str(config), "--no-connect")
    return out.returncode, out.stdout + out.stderr


def test_init_makes_a_random_owner_only_store_key_and_check_is_content(tmp_path: Path) -> None:
    config, key = made(tmp_path)
    assert KEY_LINE in config.read_text()
    assert key.stat().st_mode & 0o777 == 0o600
    passphrase = key.read_text().strip()
    assert len(passphrase) >= 40 and "PLACEHOLDER" not in passphrase
    _, other = made(tmp_path / "second")
    assert other.read_text().strip() != passphrase, "two bots got the same passphrase"
    code, said = check(config)
    assert code == 0, said
    assert "the Matrix crypto store is pickled with matrix.store_key_file" in said
    assert DEFAULT_WARNING not in said
    assert "matrix.store_key_file:" not in said.split("to fill in:")[1]
    assert passphrase not in said


def test_check_warns_while_the_default_passphrase_is_in_use(tmp_path: Path) -> None:
    config, _ = made(tmp_path)
    config.write_text(config.read_text().replace(KEY_LINE, ""))
    code, said = check(config)
    assert code == 0, said  # an upgrade never bricks: the bot runs as it did
    assert f"  - {DEFAULT_WARNING}\n" in said


def test_check_warns_for_each_secret_file_others_can_read(tmp_path: Path) -> None:
    config, key = made(tmp_path)
    password = tmp_path / "bot" / "secrets" / "matrix-password"
    password.chmod(0o640)
    key.chmod(0o604)
    code, said = check(config)
    assert code == 0, said
    assert (
        f"warning: matrix.password_file: secret file {password} can be read by group or "
        f"others (mode 640): chmod 600 {password}"
    ) in said
    assert f"matrix.store_key_file: secret file {key} can be read" in said
    assert f"chmod 600 {key}\n" in said
    assert "xmpp.password_file: secret file" not in said  # init made it 0600


def test_a_missing_store_key_file_stops_the_bot_naming_the_key(tmp_path: Path) -> None:
    config, key = made(tmp_path)
    key.unlink()
    for command in ("run", "check"):
        out = chatbot(command, "--config", str(config))
        assert out.returncode == 2, out.stdout + out.stderr
        assert out.stderr.startswith(f"chatbot: {config}: matrix.store_key_file: secret file")
        assert f"{key} does not exist" in out.stderr and "Traceback" not in out.stderr
