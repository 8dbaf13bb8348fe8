"""Running git for workspaces and remotes: a minimal environment, errors in words.

Git runs with a minimal environment (no `GIT_*` variables, no service secrets): a
`GIT_DIR` inherited from a hook or a shell cannot redirect it to another
repository, and the target repository's hooks see no tokens.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from runners.process import Outcome, ProcessLimits, default_base_env, run_process
from runners.runtimes.base import RunnerError, clean_detail
from runners.sandbox import Sandbox, SandboxError, wrap

_GIT_LIMITS = ProcessLimits(timeout=300.0, idle_timeout=None, output_cap=16 * 1024 * 1024)


class WorkspaceError(RunnerError):
    """A git step of a builder workspace or a merge failed."""


def _git_env() -> dict[str, str]:
    # Hooks of the target repository run with this environment: give them no secrets.
    env = default_base_env()
    env["LC_ALL"] = "C"
    env["GIT_TERMINAL_PROMPT"] = "0"
    return env


@dataclass(frozen=True, slots=True)
class GitResult:
    code: int | None
    out: str
    err: str


async def run_git(
    cwd: Path,
    *args: str,
    stdin: str = "",
    check: bool = True,
    env: Mapping[str, str] | None = None,
    sandbox: Sandbox | None = None,
) -> GitResult:
    """git with `args` in `cwd`; with a `sandbox`, inside it (the repository's hooks)."""
    argv: list[str] = ["git", *args]
    if sandbox is not None:
        git = shutil.which("git")
        if git is None:
            raise WorkspaceError("git is not installed (binary not found: git)")
        try:
            argv = wrap([git, *args], cwd, sandbox)
        except SandboxError as error:
            raise WorkspaceError(f"the sandbox for git cannot be made: {error}") from None
    result = await run_process(
        argv,
        cwd=cwd,
        stdin=stdin,
        base_env=_git_env(),
        extra_env=env,
        limits=_GIT_LIMITS,
    )
    if result.outcome is Outcome.NOT_FOUND:
        raise WorkspaceError("git is not installed (binary not found: git)")
    git = GitResult(result.exit_code, result.stdout, result.stderr_tail)
    if check and result.outcome is not Outcome.OK:
        detail = git.err.strip() or result.error
        raise WorkspaceError(clean_detail(f"git {args[0]} failed: {detail}"))
    return git


async def resolve(cwd: Path, revision: str) -> str | None:
    git = await run_git(
        cwd, "rev-parse", "--verify", "--quiet", f"{revision}^{{commit}}", check=False
    )
    return git.out.strip() if git.code == 0 else None
