"""`chatbot init` and `chatbot check --no-connect`: a configuration a new user can fill in.

- every key of the configuration model is in config/example.toml (which is what
  `init` writes), so a key added without documentation fails here;
- `init DIR` + `check --no-connect` passes at once and lists what to fill in;
- `check --no-connect` fails on what would break every run: a missing CLI, a
  missing repository, one that is not git, one without docs/intent.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, get_args

from pydantic import BaseModel

from chatbot.app.init import example_text
from chatbot.config import Config
from tests.inprocess import chatbot

ROOT = Path(__file__).resolve().parents[2]
_SECTION = re.compile(r"^#?\s*\[\[?(?P<name>[a-z0-9_.-]+)\]")  # [[routines]] too
_KEY = re.compile(r"^#?\s*(?P<key>[a-z_]+)\s*=")


def documented(text: str) -> set[tuple[str, str]]:
    """(section, key) pairs the file shows, set or commented out; a named table like
    [lanes.light] counts as [lanes.*]."""
    found = set()
    section = ""
    for line in text.splitlines():
        if match := _SECTION.match(line):
            section = match["name"]
            parts = section.split(".")
            found.add((".".join(parts[:-1]), parts[-1]) if len(parts) > 1 else ("", section))
            continue
        if match := _KEY.match(line):
            found.add((_generic(section), match["key"]))
    return {(_generic(s), k) for s, k in found}


def _generic(section: str) -> str:
    parts = section.split(".")
    if parts[0] in ("runtimes", "lanes", "roles") and len(parts) == 2:
        return f"{parts[0]}.*"
    return section


def model_keys(model: type[BaseModel] = Config, section: str = "") -> set[tuple[str, str]]:
    """Every key the configuration model accepts, as (section, key)."""
    keys = set()
    for name, field in model.model_fields.items():
        if field.exclude:  # set by the loader (where it was read, keys set aside), not the file
            continue
        sub, named = _section(field.annotation)
        if sub is None:
            keys.add((section, name))
            continue
        path = f"{section}.{name}".strip(".")
        keys |= model_keys(sub, f"{path}.*" if named else path)
    return keys


def _section(annotation: Any) -> tuple[type[BaseModel] | None, bool]:
    for candidate in (annotation, *get_args(annotation)):
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate, False
        args = get_args(candidate)
        if len(args) == 2 and isinstance(args[1], type) and issubclass(args[1], BaseModel):
            return args[1], True
    return None, False


def test_every_key_of_the_model_is_in_the_example() -> None:
    assert (ROOT / "config" / "example.toml").read_text() == example_text()
    missing = model_keys() - documented(example_text())
    assert missing == set(), f"not documented in config/example.toml: {sorted(missing)}"


def test_a_key_added_without_documentation_is_caught() -> None:
    class Extended(Config):
        brand_new_key: int = 1

    assert ("", "brand_new_key") in model_keys(Extended) - documented(example_text())


def test_init_then_check_passes_at_once_and_says_what_to_fill_in(tmp_path: Path) -> None:
    made = chatbot("init", str(tmp_path / "bot"))
    assert made.returncode == 0, made.stderr
    config = tmp_path / "bot" / "bot.toml"
    assert config.is_file() and f"chatbot check --config {config} --no-connect" in made.stdout
    secret = tmp_path / "bot" / "secrets" / "xmpp-password"
    assert secret.stat().st_mode & 0o777 == 0o600
    checked = chatbot("check", "--config", str(config), "--no-connect")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    out = checked.stdout
    assert "to fill in:" in out
    assert f"xmpp.password_file: {secret} still holds a placeholder" in out
    assert "xmpp.jid: board@example.org is an example" in out
    assert "prompt templates: all 11 found" in out
    assert "deploy.command" not in out  # no deploy step until one is set
    # What an owner can do with each runtime's running agent, from its record.
    assert "talk: /steer, approvals, /interrupt, hand-over (interactive protocol of " in out
    assert "@openai/codex@" in out and "@anthropic-ai/claude-code@" in out
    # A second init would clobber secrets someone filled in: refused, nothing changed.
    secret.write_text("the real password\n")
    again = chatbot("init", str(tmp_path / "bot"))
    assert again.returncode == 2 and "exists already" in again.stderr
    assert secret.read_text() == "the real password\n"


def test_check_without_connecting_fails_on_what_breaks_every_run(tmp_path: Path) -> None:
    chatbot("init", str(tmp_path / "bot"))
    config = tmp_path / "bot" / "bot.toml"
    text = config.read_text()
    broken = re.sub(r'(\[runtimes.claude\]\nbinary = )"[^"]*"', r'\1"no-such-claude"', text)
    config.write_text(broken)
    out = chatbot("check", "--config", str(config), "--no-connect")
    assert out.returncode == 1
    assert "runtime claude: no-such-claude NOT found" in out.stdout
    config.write_text(text.replace('repo = "repo"', 'repo = "nowhere"'))
    out = chatbot("check", "--config", str(config), "--no-connect")
    assert out.returncode == 1 and "nowhere does NOT exist" in out.stdout
    plain = tmp_path / "plain"
    plain.mkdir()
    config.write_text(text.replace('repo = "repo"', f'repo = "{plain}"'))
    out = chatbot("check", "--config", str(config), "--no-connect")
    assert out.returncode == 1
    assert "NO docs/intent folder" in out.stdout and "NOT a git repository" in out.stdout


def test_check_says_in_plain_words_when_a_server_cannot_be_reached(tmp_path: Path) -> None:
    import socket

    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    chatbot("init", str(tmp_path / "bot"))
    config = tmp_path / "bot" / "bot.toml"
    text = config.read_text()
    text = text.replace('# host = "xmpp.example.org"\n# port = 5222\n', "", 1)
    text = text.replace("[xmpp]\n", f'[xmpp]\nhost = "127.0.0.1"\nport = {port}\n', 1)
    text = text.replace('"https://matrix.example.org"', f'"http://127.0.0.1:{port}"')
    config.write_text(text)
    out = chatbot("check", "--config", str(config))
    assert out.returncode == 1
    said = out.stdout + out.stderr
    assert f"NOT logged in: cannot reach 127.0.0.1:{port}: connection refused" in said
    # The address came from xmpp.host: the message names it, not only the port.
    assert "are xmpp.host and xmpp.port right?" in said
    assert f"NOT logged in: cannot reach http://127.0.0.1:{port}: connection refused" in said
    for raw in ("ClientConnectorError", "ConnectionKey", "Errno", "Traceback"):
        assert raw not in said, raw


def test_check_says_which_engines_cannot_be_talked_to() -> None:
    from chatbot.app.check import talk_line

    assert talk_line("claude").startswith("talk: /steer, approvals, /interrupt, hand-over")
    assert "cannot" in talk_line("gemini") and "/cancel, then /fix" in talk_line("gemini")
