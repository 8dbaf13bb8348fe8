"""`chatbot check`: is this configuration ready to run, and what is left to fill in?

Without `--no-connect` it also logs in to each configured chat server and reports
per room. Locally it looks at the repository (exists, is git, holds intent files),
each runtime's CLI (there, executable, its version against the tested one) and the
prompt templates; a problem there fails the check. Placeholders (a secret file
`chatbot init` wrote, an example.org identity, a scripted stand-in CLI) fail
nothing: they are listed under "to fill in". Notifications that wait in the outbox
for a room are listed too, so a room the bot cannot post to shows up here. What to
fill in and what is broken come first; the resolved configuration only with
`--show-config`.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

from chatbot.app.check_db import check_database, remote_line
from chatbot.app.check_files import files_lines
from chatbot.app.check_keys import keys_at_rest
from chatbot.app.check_routines import routine_lines
from chatbot.app.startup import open_store
from chatbot.app.wiring import destinations, servers, settings_for
from chatbot.board.importer import SOURCES, scan
from chatbot.config import Config, RuntimeSection
from chatbot.domain.counted import counted
from chatbot.domain.roles import ROLES
from chatbot.pipeline import gate, sandboxing
from chatbot.secret_files import read_secret
from chatbot.store import chat as chat_store
from chatbot.store.kv import TransportState
from chatbot.transports.base import ProbeReport
from chatbot.transports.networks import NETWORKS
from chatbot.transports.reports import yes_no
from chatbot.web import describe as describe_web
from chatbot.web.metrics_http import describe as describe_metrics
from runners import prompts, versions
from runners.process import Outcome, ProcessLimits, default_base_env, run_process
from runners.runtimes import get_runtime

VERSION_LIMITS = ProcessLimits(timeout=30, idle_timeout=None, kill_grace=1.0)


@dataclass
class Report:
    """What check found, printed most wanted first (issue 34): a new user runs check to
    learn what is left to do, so the placeholders to fill in and what is broken come
    before a line per thing that is fine."""

    to_fill_in: list[str] = field(default_factory=list)
    # What fails the check; each entry may span lines (a block that failed as a whole).
    problems: list[str] = field(default_factory=list)
    details: list[str] = field(default_factory=list)

    def add(self, text: str, ok: bool = True) -> None:
        (self.details if ok else self.problems).append(text)

    @property
    def ok(self) -> bool:
        return not self.problems

    def text(self) -> str:
        lines = []
        if self.to_fill_in:
            lines.append("to fill in:")
            lines += [f"  - {item}" for item in self.to_fill_in]
        if self.problems:
            lines.append("problems:")
            lines += [f"  - {_indented(problem)}" for problem in self.problems]
        return "\n".join([*lines, *self.details])


def _indented(text: str) -> str:
    return text.replace("\n", "\n    ")


def describe(report: ProbeReport) -> list[str]:
    lines = [
        f"{report.transport} {report.account}: "
        + ("logged in" if report.logged_in else f"NOT logged in: {report.error}")
    ]
    for room in report.rooms:
        line = f"  room {room.room}: joined {yes_no(room.joined)}, can post {yes_no(room.can_post)}"
        if (network := NETWORKS.get(report.transport)) is not None:
            line += network.room_facts(room)
        if room.detail:
            line += f" — {room.detail}"
        lines.append(line)
    return lines


async def check_transports(config: Config) -> bool:
    reports: list[ProbeReport] = []
    sqlite = config.bot.sqlite_file
    store = None
    if sqlite is None or sqlite.exists():
        store = await open_store(config)
    try:
        state = TransportState(store) if store is not None else None
        for network, _ in servers(config):
            if network.probe is not None:
                reports.append(await network.probe(settings_for(config, network), state))
        for report in reports:
            print("\n".join(describe(report)))
        ok = all(report.ok for report in reports)
        if store is not None:
            for transport, room, count, error in await chat_store.waiting(store.reader):
                ok = ok and not error
                print(
                    f"outbox: {counted(count, 'notification')} waiting for {transport} {room}"
                    + (f" (last error: {error})" if error else "")
                )
            week_ago = time.time() - 7 * 86400
            for transport, room, count, error in await chat_store.failed(store.reader, week_ago):
                ok = False
                print(
                    f"outbox: gave up on {counted(count, 'notification')} to {transport} {room} "
                    f"in the last 7 days (last reason: {error}); the service log has each one, "
                    "and /status (or `chatbot cards`) shows where the board stands"
                )
        return ok
    finally:
        if store is not None:
            await store.close()


def _runtime_env(runtime: RuntimeSection) -> dict[str, str]:
    """The environment a run of this runtime gets (as the pipeline builds it), no secrets."""
    env = default_base_env()
    env.update({name: os.environ[name] for name in runtime.pass_env if name in os.environ})
    env.update(runtime.env)
    return env


async def describe_runtime(name: str, runtime: RuntimeSection, cwd: str) -> tuple[str, bool]:
    """One line on a runtime's CLI: found or missing, its version against the tested one."""
    env = _runtime_env(runtime)
    result = await run_process(
        [runtime.binary, "--version"], cwd=cwd, base_env=env, limits=VERSION_LIMITS
    )
    if result.outcome is Outcome.NOT_FOUND:
        return (
            f"runtime {name}: {runtime.binary} NOT found: install it or set "
            f"runtimes.{name}.binary to its path",
            False,
        )
    where = shutil.which(runtime.binary, path=env.get("PATH")) or runtime.binary
    said = (result.stdout + result.stderr_tail).strip()
    if not result.ok:
        detail = said.splitlines()[-1] if said else result.error
        return f"runtime {name}: {where} found, but `--version` failed: {detail}", False
    verdict = versions.verdict(name, said)
    line = f"runtime {name}: {where} found, version {verdict.found or 'unknown'}"
    if verdict.found is None:
        line += f" (`--version` said {said[:80]!r})"
    elif verdict.older:
        package = get_runtime(name).cli.package
        line += (
            f", OLDER than the tested {verdict.tested}: "
            f"update it (npm install -g {package}@{verdict.tested})"
        )
    elif verdict.newer:
        line += f", newer than the tested {verdict.tested}"
    else:
        line += ", the tested version"
    return line, True


async def check_runtimes(config: Config, report: Report) -> None:
    """A line per configured runtime; a problem when its CLI is missing or broken."""
    # Any existing folder will do for `--version`; the config's may not exist yet
    # (the console demo's state folder is made at its first run).
    folder = config.source.parent if config.source.parent.is_dir() else Path.cwd()
    for name, runtime in config.runtimes.items():
        line, found = await describe_runtime(name, runtime, str(folder))
        report.add(f"{line}\n  {talk_line(name)}" if found else line, found)


def talk_line(name: str) -> str:
    """What an owner can do with this runtime's running builder or fixer (issue 25)."""
    record = get_runtime(name)
    talking = record.talking
    if talking is None:
        return (
            f"talk: {name} runs one-shot: /steer, approvals and /interrupt answer that this "
            "engine cannot (use /cancel, then /fix with a note)"
        )
    can = [
        word
        for word, ok in (
            ("/steer", talking.steers),
            ("approvals", talking.asks_approval),
            ("/interrupt", talking.interrupts),
            ("hand-over", record.hand_over is not None),
        )
        if ok
    ]
    return f"talk: {', '.join(can)} (interactive protocol of {record.cli.pin})"


# What `chatbot init` writes into a secret file until the real secret is there.
PLACEHOLDER = "PLACEHOLDER"
EXAMPLE_DOMAIN = "example.org"


def run_check(config: Config, connect: bool, show_config: bool = False) -> bool:
    """Print the whole check, what to fill in and what is broken first; False when
    something must be fixed before the bot runs."""
    report = Report(to_fill_in=to_fill_in(config))
    report.add(f"configuration OK: {config.source}")
    report.add(f"transports: {', '.join(config.transports) or 'none'}")
    if config.bot.remote is not None:
        report.add(*asyncio.run(remote_line(config, connect)))
    else:
        report.add(*repository_line(config))
    for line, fine in asyncio.run(check_database(config, connect)):
        report.add(line, fine)
    asyncio.run(check_runtimes(config, report))
    report.add(*prompt_templates_line())
    report.add(describe_web(config))
    report.add(describe_metrics(config))
    if config.deprecated:
        # Accepted for now, so the bot starts; said here so the file gets mended.
        found = [f"  - {deprecated.line()}" for deprecated in config.deprecated]
        report.add("\n".join(["deprecated (the bot starts; edit the file):", *found]))
    report.add(digest_line(config))
    for line, fine in files_lines(config):
        report.add(line, fine)
    sandbox_lines, sandbox_ok = sandboxing.check_lines(config)
    report.add("\n".join(sandbox_lines), sandbox_ok)
    for line, fine in gate.check_lines(config):
        report.add(line, fine)
    for line, fine in asyncio.run(routine_lines(config, connect)):
        report.add(line, fine)
    report_keys_at_rest(config, report)
    if show_config:
        resolved = json.dumps(config.redacted(), indent=2, ensure_ascii=False)
        report.add(f"resolved configuration:\n{resolved}")
    else:
        report.add("resolved configuration: `chatbot check --show-config` prints it")
    print(report.text())
    ok = report.ok
    if connect:
        ok = asyncio.run(check_transports(config)) and ok
    return ok


def report_keys_at_rest(config: Config, report: Report) -> None:
    """The block, with a problem for each key that no longer opens what it protects."""
    found = keys_at_rest(config)
    if not found:
        report.add("keys at rest: every secret file is readable by the bot's user only")
        return
    for line, fine in found:
        if not fine:
            report.add(f"keys at rest: {line}", ok=False)
    if warnings := [line for line, fine in found if fine]:
        report.add("\n".join(["keys at rest:", *(f"  - {line}" for line in warnings)]))


def digest_line(config: Config) -> str:
    """When the daily digest comes, and where; or how to have one."""
    at = config.bot.digest_at
    if at is None:
        return 'digest: off (set bot.digest_at = "09:00" for one message a day)'
    zone = time.strftime("%Z") or "local time"
    rooms = len(destinations(config))
    return (
        f"digest: daily at {at} ({zone}, the bot's local time) to {counted(rooms, 'room')}; "
        "it mentions nobody, so quiet hours do not hold it"
    )


def repository_line(config: Config) -> tuple[str, bool]:
    """Where the cards come from, and whether builds can work there."""
    repo = config.bot.checkout
    if not repo.is_dir():
        if config.bot.seed_repo is not None:
            return f"repository: {repo} (created from {config.bot.seed_repo} at first start)", True
        return f"repository: {repo} does NOT exist: no cards, no builds (set bot.repo)", False
    files, rejected = scan(repo)
    line = f"repository: {repo}: {len(files)} intent files"
    ok = True
    if rejected:
        line += f", {len(rejected)} not importable (see `chatbot run` output)"
    if not any((repo / folder).is_dir() for folder, _ in SOURCES):
        line += "; NO docs/intent folder: the board stays empty"
        ok = False
    if not (repo / ".git").exists():
        line += "; NOT a git repository: builds and deploys will fail"
        ok = False
    return line, ok


def prompt_templates_line() -> tuple[str, bool]:
    """Every role's prompt templates, read as a run will read them."""
    missing = []
    names = [name for role in ROLES for name in role.templates]
    for name in names:
        try:
            prompts.template_text(name)
        except prompts.PromptError:
            missing.append(name)
    if missing:
        return f"prompt templates: MISSING {', '.join(missing)}: reinstall the package", False
    return f"prompt templates: all {len(names)} found", True


def to_fill_in(config: Config) -> list[str]:
    """Placeholders still in the configuration: fine for a check, not for real use."""
    todo = []
    for key, path in config.secret_files().items():
        if read_secret(path).startswith(PLACEHOLDER):
            todo.append(f"{key}: {path} still holds a placeholder, not the secret")
    for key, value in _strings(config.redacted()):
        if EXAMPLE_DOMAIN in value:
            todo.append(f"{key}: {value} is an example; put your own")
    deploy = config.deploy.command if config.deploy else []
    if deploy and deploy[0].startswith(("./", "../")):
        if not (config.bot.checkout / deploy[0]).is_file():
            todo.append(f"deploy.command: {deploy[0]} is not in the repository (it runs there)")
    for name, runtime in config.runtimes.items():
        if Path(runtime.binary).name.startswith("intent-board-scripted-"):
            tested = versions.tested_version(name) or "the tested version"
            todo.append(
                f"runtimes.{name}.binary: a scripted stand-in that answers from a demo "
                f"scenario; install the real CLI ({tested}) and name it here"
            )
    return todo


def _strings(value: object, key: str = "") -> list[tuple[str, str]]:
    if isinstance(value, dict):
        return [pair for k, v in value.items() for pair in _strings(v, f"{key}.{k}".strip("."))]
    if isinstance(value, list):
        return [pair for item in value for pair in _strings(item, key)]
    return [(key, value)] if isinstance(value, str) else []
