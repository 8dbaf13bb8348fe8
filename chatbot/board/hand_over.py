"""Hand a card's agent session over to a person at a terminal: which session, where
its worktree is, and the exact command that continues it (`Runtime.hand_over`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from chatbot.domain.phases import END_PHASES
from chatbot.domain.roles import BY_NAME as ROLES
from chatbot.store.cards import Card
from chatbot.store.telemetry import RunRecord
from runners.runtimes import RUNTIMES, Mode, RunRequest
from runners.workspace import agent_home


class RuntimeSettings(Protocol):
    """What a `[runtimes.NAME]` section says of how its CLI is started."""

    @property
    def binary(self) -> str: ...

    @property
    def base_url(self) -> str | None: ...

    @property
    def api_key_file(self) -> Path | None: ...


@dataclass(frozen=True)
class HandOver:
    session: str
    runtime: str
    role: str
    worktree: Path
    #: The shell line that continues the session; None: its runtime cannot.
    command: str | None


def hand_over(
    card: Card,
    runs: list[RunRecord],
    workspaces: Path,
    runtimes: Mapping[str, RuntimeSettings],
) -> HandOver | None:
    """The latest session of a worktree role's run on this card (runs: newest first),
    with what `workspaces` (the folder of the worktrees) and the runtimes' sections say.
    None for a finished card: there is nothing left to continue, and its worktree is gone."""
    if card.phase in END_PHASES:
        return None
    run = next(
        (r for r in runs if r.session_id and ROLES.get(r.role) and ROLES[r.role].writes), None
    )
    if run is None or run.session_id is None:
        return None
    root = workspaces.absolute()
    worktree = root / card.slug
    record = RUNTIMES.get(run.runtime)
    section = runtimes.get(run.runtime)
    command = None
    if record is not None and record.hand_over is not None and section is not None:
        request = RunRequest(
            binary=section.binary,
            cwd=worktree,
            prompt="",
            mode=Mode.WORKSPACE_WRITE,
            # The model and effort the session ran with: on another one it is another
            # agent, and codex compacts the whole history away when a resumed session
            # switches models.
            model=run.configured_model or "",
            reasoning_effort=run.actual_reasoning_effort or "",
            base_url=section.base_url or "",
            api_key_file=section.api_key_file,
            home=agent_home(root, run.runtime),
        )
        try:
            command = record.hand_over(request, run.session_id)
        except ValueError:
            command = None  # a session id the runtime refuses to put on a command line
    return HandOver(run.session_id, run.runtime, run.role, worktree, command)
