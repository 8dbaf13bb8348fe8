"""The console demo: the embedded default when no configuration is given.

`chatbot run` with no --config (and no $CHATBOT_CONFIG) runs the bot with the
console as its chat, a SQLite board under ./var/console, a demo repository seeded
from `seed/`, and the scripted agent CLIs answering from `scenario.json`: the
whole pipeline in a few seconds, with no chat server and no model account. It
ships inside the wheel, so an installed bot can show itself too.
"""

from __future__ import annotations

import os
import secrets
import shutil
import sys
import sysconfig
from importlib import resources
from pathlib import Path
from string import Template

import runners
from chatbot.config import Config, parse_config
from runners.scripted.stand_ins import STAND_INS

STATE = Path("var") / "console"
# Where the demo's web board listens ("off": none); a free port of this machine.
WEB_ENV = "INTENT_BOARD_DEMO_WEB"
WEB_DEFAULT = "127.0.0.1:8765"


def scripted_cli(name: str) -> str:
    """Where the scripted `name` was installed (a console script of this package)."""
    command = f"intent-board-scripted-{name}"
    for folder in (Path(sys.executable).parent, Path(sysconfig.get_path("scripts"))):
        if (folder / command).is_file():
            return str(folder / command)
    found = shutil.which(command)
    if found is None:
        raise FileNotFoundError(f"{command} is not installed; reinstall the package")
    return found


def _web(state: Path, listen: str | None) -> str:
    listen = (listen or os.environ.get(WEB_ENV) or WEB_DEFAULT).strip()
    if listen.lower() == "off":
        return ""
    return (
        f'[web]\nlisten = "{listen}"\ntoken_file = "{state.as_posix()}/web-token"\n'
        f'public_url = "http://{listen}/"\n'
    )


def config(state: Path = STATE, *, web: str | None = None) -> Config:
    """The demo's configuration, with its state under `state` (relative to the cwd), its
    web board on `web` (host:port, or "off"; default: $INTENT_BOARD_DEMO_WEB or 8765).

    Makes the state folder, the board's token and `console.toml` there: the
    configuration as run, so `chatbot check --config var/console/console.toml` reads it.
    """
    files = resources.files(__name__)
    state = state.resolve()
    text = Template(files.joinpath("console.toml").read_text(encoding="utf-8")).substitute(
        state=state.as_posix(),
        seed=Path(str(files.joinpath("seed"))).as_posix(),
        scenario=Path(str(files.joinpath("scenario.json"))).as_posix(),
        runners=Path(runners.__file__).parent.as_posix(),
        web=_web(state, web),
        # $codex, $claude: console.toml's runtimes run the stand-in of their CLI.
        **{command: scripted_cli(command) for command in STAND_INS},
    )
    state.mkdir(mode=0o700, parents=True, exist_ok=True)
    token = state / "web-token"
    if not token.exists():
        fd = os.open(token, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(secrets.token_urlsafe(32) + "\n")
    (state / "console.toml").write_text(text, encoding="utf-8")
    return parse_config(text, state / "console.toml")
