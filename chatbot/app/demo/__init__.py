"""The console demo: the embedded default when no configuration is given.

`chatbot run` with no --config (and no $CHATBOT_CONFIG) runs the bot with the
console as its chat, a SQLite board under ./var/console, a demo repository seeded
from `seed/`, and the scripted agent CLIs answering from `scenario.json`: the
whole pipeline in a few seconds, with no chat server and no model account. It
ships inside the wheel, so an installed bot can show itself too.
"""

from __future__ import annotations

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


def config(state: Path = STATE) -> Config:
    """The demo's configuration, with its state under `state` (relative to the cwd)."""
    files = resources.files(__name__)
    state = state.resolve()
    text = Template(files.joinpath("console.toml").read_text(encoding="utf-8")).substitute(
        state=state.as_posix(),
        seed=Path(str(files.joinpath("seed"))).as_posix(),
        scenario=Path(str(files.joinpath("scenario.json"))).as_posix(),
        runners=Path(runners.__file__).parent.as_posix(),
        # $codex, $claude: console.toml's runtimes run the stand-in of their CLI.
        **{command: scripted_cli(command) for command in STAND_INS},
    )
    return parse_config(text, state / "console.toml")
