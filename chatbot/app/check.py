"""`chatbot check`: log in to each configured chat server and report per room.

Also lists notifications that wait in the outbox for a room, so a room the bot
cannot post to shows up here and not only in the service log, and says per
configured runtime whether its CLI is there and how its version compares with
the version this project is tested against.
"""

from __future__ import annotations

import os
import shutil
import time

from chatbot.app.wiring import matrix_settings, xmpp_settings
from chatbot.config import Config, RuntimeSection
from chatbot.store import Store
from chatbot.store import chat as chat_store
from chatbot.store.kv import TransportState
from chatbot.transports.base import ProbeReport
from chatbot.transports.probe import probe_matrix, probe_xmpp
from runners import versions
from runners.process import Outcome, ProcessLimits, default_base_env, run_process

VERSION_LIMITS = ProcessLimits(timeout=30, idle_timeout=None, kill_grace=1.0)


def _yes_no(value: bool | None) -> str:
    return "unknown" if value is None else ("yes" if value else "NO")


def describe(report: ProbeReport) -> list[str]:
    lines = [
        f"{report.transport} {report.account}: "
        + ("logged in" if report.logged_in else f"NOT logged in: {report.error}")
    ]
    for room in report.rooms:
        line = (
            f"  room {room.room}: joined {_yes_no(room.joined)}, can post {_yes_no(room.can_post)}"
        )
        if report.transport == "xmpp":
            line += f", sees real JIDs {_yes_no(room.sees_real_ids)}"
            if room.sees_real_ids is False:
                line += " (nothing said there can count as an owner's)"
        if report.transport == "matrix" and room.joined:
            # Not being encrypted is no fault, so no capitals for it.
            line += f", encrypted {_yes_no(room.encrypted).lower()}"
            if room.encrypted:
                line += f", can decrypt {_yes_no(room.can_decrypt)}"
        if room.detail:
            line += f" — {room.detail}"
        lines.append(line)
    return lines


async def check_transports(config: Config) -> bool:
    reports: list[ProbeReport] = []
    store = await Store.open(config.bot.database) if config.bot.database.exists() else None
    try:
        if (settings := xmpp_settings(config)) is not None:
            reports.append(await probe_xmpp(settings))
        if (matrix := matrix_settings(config)) is not None:
            state = TransportState(store) if store is not None else None
            reports.append(await probe_matrix(matrix, state))
        for report in reports:
            print("\n".join(describe(report)))
        ok = all(report.ok for report in reports)
        if store is not None:
            for transport, room, count, error in await chat_store.waiting(store.reader):
                ok = ok and not error
                print(
                    f"outbox: {count} notification(s) wait for {transport} {room}"
                    + (f" (last error: {error})" if error else "")
                )
            week_ago = time.time() - 7 * 86400
            for transport, room, count, error in await chat_store.failed(store.reader, week_ago):
                ok = False
                print(
                    f"outbox: {count} notification(s) to {transport} {room} were given up "
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
        package = versions.TESTED[versions.BINARY_OF_RUNTIME[name]][0]
        line += (
            f", OLDER than the tested {verdict.tested}: "
            f"update it (npm install -g {package}@{verdict.tested})"
        )
    elif verdict.newer:
        line += f", newer than the tested {verdict.tested}"
    else:
        line += ", the tested version"
    return line, True


async def check_runtimes(config: Config) -> bool:
    """Print a line per configured runtime; False when a CLI is missing or broken."""
    ok = True
    for name, runtime in config.runtimes.items():
        line, found = await describe_runtime(name, runtime, str(config.source.parent))
        print(line)
        ok = ok and found
    return ok
