"""Which sandbox each agent run gets, from the configuration: what it is shown, what is
hidden from it, and whether its network is only the provider (`runners.sandbox`).

The bot's own things are hidden from every run: the configuration's folder, every
secret file it names, the board's database with its folder (the WAL, the Matrix crypto
store and backups beside it), the workspaces (other cards' worktrees and the other
runtimes' homes: one CLI's login is not another's to read), and the bot user's home,
which the run sees as an empty folder of its own.
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

from chatbot.config import Config
from runners.runtimes.registry import RUNTIMES
from runners.sandbox import NetworkAccess, Sandbox, find_tool, git_paths, program_paths
from runners.workspace import AGENT_HOMES


@cache
def _installed_tool() -> str | None:
    return find_tool()


def tool(config: Config) -> str | None:
    """The sandbox tool runs use, or None: switched off, or not installed."""
    if config.bot.sandbox == "off":
        return None
    return _installed_tool()


def unprotected(config: Config) -> list[str]:
    """The lanes whose writing runs would have no sandbox at all: no sandbox tool, and a
    runtime with no protection of its own (gemini's yolo)."""
    if config.bot.sandbox == "off" or tool(config) is not None:
        return []
    return without_protection(config)


def without_protection(config: Config) -> list[str]:
    """The lanes whose CLI has no protection of its own."""
    return sorted(
        name
        for name, lane in config.lanes.items()
        if lane.runtime in RUNTIMES and not RUNTIMES[lane.runtime].own_protection
    )


def start_problem(config: Config) -> str | None:
    """Why the bot must not start with this sandbox setting on this host, or None."""
    if config.bot.sandbox == "bwrap" and tool(config) is None:
        return (
            '[bot] sandbox = "bwrap" but bubblewrap is not installed; install it '
            '(apt-get install bubblewrap) or set [bot] sandbox = "auto"'
        )
    lanes = unprotected(config)
    if lanes:
        return (
            f"lane(s) {', '.join(lanes)} would run a writing agent with no sandbox at all "
            "(its CLI has none of its own): install bubblewrap (apt-get install bubblewrap), "
            'or set [bot] sandbox = "off" to run it unconfined on purpose'
        )
    return None


def hidden_paths(config: Config) -> tuple[Path, ...]:
    """What no agent may see of the bot's own."""
    hidden: list[Path] = [config.source.resolve().parent]
    hidden += [path.resolve() for path in config.secret_files().values()]
    database = config.bot.sqlite_file
    if database is not None:
        database = database.resolve()
        hidden.append(database.parent)
        hidden += [Path(f"{database}{suffix}") for suffix in ("", "-wal", "-shm", "-journal")]
    if config.matrix is not None and config.matrix.crypto_store is not None:
        hidden.append(config.matrix.crypto_store.resolve())
    hidden.append(config.bot.workspaces.resolve())
    return tuple(dict.fromkeys(hidden))


def plan(
    config: Config,
    *,
    runtime: str,
    cwd: Path,
    writes: bool,
    network: str,
    home: Path | None,
    shown: tuple[Path, ...] = (),
) -> Sandbox | None:
    """The sandbox of one run in `cwd`; None when runs are not sandboxed here. `shown`:
    folders it may read besides (a read-only run's attached files)."""
    found = tool(config)
    if found is None:
        return None
    section = config.runtimes.get(runtime)
    # The one caller (JobContext.run) refuses a runtime without a section before this.
    assert section is not None, runtime
    cwd = cwd.resolve()
    readable = [*git_paths(cwd), *(Path(path) for path in section.read_paths), *shown]
    writable = [Path(path) for path in section.write_paths]
    for folder in writable:
        if not folder.exists():
            folder.mkdir(mode=0o700, parents=True)
    (writable if writes else readable).append(cwd)
    if home is not None:
        home.mkdir(mode=0o700, parents=True, exist_ok=True)
        writable.append(home.resolve())
    user_home = os.environ.get("HOME")
    scratch = (Path(user_home).resolve(),) if user_home and user_home != "/" else ()
    return Sandbox(
        tool=found,
        network=NetworkAccess(network),
        readable=tuple(readable),
        writable=tuple(writable),
        # A run in the folder the configuration lies in still sees that folder; the
        # secrets and the database in it stay hidden.
        hidden=tuple(path for path in hidden_paths(config) if path != cwd),
        scratch=scratch,
    )


def check_lines(config: Config) -> tuple[list[str], bool]:
    """What `chatbot check` says of the agents' sandbox; False when the bot would refuse
    to start."""
    problem = start_problem(config)
    found = tool(config)
    lines: list[str] = []
    if config.bot.sandbox == "off":
        lines.append(
            'sandbox: OFF on purpose ([bot] sandbox = "off"): every agent runs with the bot\'s '
            "own authority (its secrets, the board, the network)"
        )
        for lane in without_protection(config):
            runtime = config.lanes[lane].runtime
            lines.append(
                f"  lane {lane}: {runtime} has no protection of its own either: its agents "
                "can do anything the bot's user can (the rooms are told once)"
            )
    elif found is not None:
        lines.append(
            f"sandbox: bubblewrap ({found}): each agent sees its worktree, its CLI and its "
            "runtime's home; the bot's configuration, secrets, database and other worktrees "
            "are hidden"
        )
    else:
        lines.append(
            "sandbox: bubblewrap is NOT installed (apt-get install bubblewrap): agents run "
            "with the bot's authority, held only by their CLI's own protection"
        )
    env = dict(os.environ)
    for name, section in config.runtimes.items():
        record = RUNTIMES.get(name)
        if record is None:
            continue
        if found is None and config.bot.sandbox != "off":
            own = record.own_protection or "NONE: a writing run of it is refused"
            lines.append(f"  runtime {name}: its own protection: {own}")
        if found is not None and not (section.base_url or record.vendor_url):
            lines.append(
                f"  runtime {name}: no base_url, so its runs keep the host's network "
                f"(set runtimes.{name}.base_url to hold them to the provider)"
            )
        for folder in (*record.state_paths(env), Path(str(home_of(config, name)))):
            for login in record.login_files:
                if (folder / login).is_file():
                    lines.append(
                        f"  runtime {name}: its agent can read its own login ({folder / login})"
                    )
    workspaces = config.bot.workspaces.resolve()
    if Path("/tmp") in workspaces.parents and any(
        RUNTIMES[name].hides_tmp for name in config.runtimes if name in RUNTIMES
    ):
        lines.append(
            f"  workspaces {workspaces} lie under /tmp: codex's own sandbox mounts a fresh "
            "/tmp over its commands and they would not find their worktree; move "
            "[bot] workspaces elsewhere"
        )
    for name, lane_section in config.lanes.items():
        if lane_section.network == "open":
            lines.append(
                f'  lane {name}: network = "open": its agents reach any address, '
                "not only the provider"
                + ("" if found else " (and with no sandbox nothing else is held either)")
            )
    if config.repo.run_hooks:
        where = "in the sandbox" if found else "AS THE BOT (no sandbox)"
        lines.append(f"  [repo] run_hooks: the repository's hooks run on the bot's commits {where}")
    if problem:
        lines.append(f"  REFUSED at start: {problem}")
    return lines, problem is None


def home_of(config: Config, runtime: str) -> Path:
    return config.bot.workspaces.resolve() / AGENT_HOMES / runtime


def for_hooks(config: Config, worktree: Path, admin: Path | None) -> Sandbox | None:
    """The sandbox the repository's hooks run in on the bot's commit (`[repo] run_hooks`):
    the worktree and what git writes of the repository (objects, refs, the worktree's
    index), its config and hooks read-only, no network; None: no sandbox here."""
    found = tool(config)
    if found is None or admin is None:
        return None
    common = (admin / ".." / "..").resolve()
    user_home = os.environ.get("HOME")
    return Sandbox(
        tool=found,
        network=NetworkAccess.PROVIDER,
        readable=(common / "config", common / "hooks", admin / "config.worktree"),
        writable=(worktree.resolve(), common, admin),
        hidden=tuple(path for path in hidden_paths(config) if path != worktree.resolve()),
        scratch=(Path(user_home).resolve(),) if user_home and user_home != "/" else (),
    )


def for_checks(config: Config, worktree: Path, program: str) -> Sandbox | None:
    """The sandbox the repository's checks run in (`[checks]`): the worktree writable
    (caches, build output), what git needs of the repository read-only, the program's
    installation (`program`: its absolute path) read-only, no network and none of the
    bot's things; None: no sandbox here."""
    found = tool(config)
    if found is None:
        return None
    worktree = worktree.resolve()
    shown: list[Path] = [*git_paths(worktree)]
    try:
        shown += program_paths(program, {"PATH": os.environ.get("PATH", os.defpath)})[1]
    except FileNotFoundError:
        pass  # the run itself says the program is missing
    user_home = os.environ.get("HOME")
    return Sandbox(
        tool=found,
        network=NetworkAccess.PROVIDER,
        # Inside the worktree it is writable already; the root would show everything.
        readable=tuple(
            path for path in shown if path != Path("/") and not path.is_relative_to(worktree)
        ),
        writable=(worktree,),
        hidden=tuple(path for path in hidden_paths(config) if path != worktree),
        scratch=(Path(user_home).resolve(),) if user_home and user_home != "/" else (),
    )
