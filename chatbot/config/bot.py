"""[bot], [console], [deploy] and [workers]: the board itself and where it runs."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, StringConstraints, field_validator, model_validator

from chatbot.config.base import USD, Section
from chatbot.config_file import (
    DATABASE_URL_PATTERN,
    GIT_URL_PATTERN,
    PATTERN_WORDS,
    PREFIX_PATTERN,
    KeyProblem,
    database_file_problem,
)
from chatbot.domain.daily import problem as daily_problem
from chatbot.domain.quiet import problem as quiet_problem
from chatbot.domain.schedules import zone_problem
from chatbot.transports.networks import claiming
from runners.checks import command_problem


def identity_problem(value: str) -> str | None:
    """What is wrong with an owner or requester, asked of the network it is written for."""
    network = claiming(value)
    if network is None:
        return "not an identity of any chat network the bot knows"
    return network.identity_problem(value)


class BotSection(Section):
    owners: list[str] = Field(min_length=1)
    requesters: list[str] = []
    # A SQLite file (one host), or a PostgreSQL address shared by the bot and workers.
    database: Path | str = Path("var/board.sqlite3")
    database_password_file: Path | None = None
    # A folder (one host), or a git address: then each process keeps its own clone.
    repo: Path | str
    locale: Literal["en", "de"] = "en"
    # One JSON object a line (time, level, logger, message, card, job, role, transport)
    # for journald and log shippers; "text" for a person at a terminal.
    log_format: Literal["text", "json"] = "text"
    keep_transcripts: bool = False
    workspaces: Path = Path("var/workspaces")
    # The OS sandbox around every agent process: bubblewrap when it is installed
    # ("auto"), bubblewrap or refuse to start ("bwrap"), or none on purpose ("off").
    sandbox: Literal["auto", "bwrap", "off"] = "auto"
    # For trying the bot: when `repo` does not exist, create it as a new git
    # repository holding a copy of this folder.
    seed_repo: Path | None = None
    # A model run printing more than this is stopped (its whole process group).
    run_output_cap_mb: int = Field(default=64, ge=1, le=4096)
    # What starts a command in chat; texts show the first. "/" alone clashes with
    # clients that run their own slash commands (Element, Profanity).
    command_prefixes: list[Annotated[str, StringConstraints(pattern=PREFIX_PATTERN)]] = Field(
        default=["/", "!"], min_length=1, max_length=4
    )
    # How often a run's status message is edited with its elapsed time and latest step.
    progress_interval_s: float = Field(default=30.0, ge=0.2, le=3600)
    # An agent's approval request nobody answers within this is denied (and the room told).
    approval_timeout_s: int = Field(default=900, ge=5, le=7 * 86400)
    # A run the provider's quota or rate limit stopped is tried again after this, unless
    # the CLI named the reset time (or the lane has a fallback).
    quota_retry_s: float = Field(default=900.0, ge=0.05, le=7 * 86400)
    # At most this many approval requests per run; the rest are denied at once.
    max_open_approvals: int = Field(default=5, ge=1, le=100)
    # A question a working builder or fixer asks the owner (ask_owner) waits this long;
    # unanswered, the agent is told to decide itself and say so in its report.
    ask_timeout_s: int = Field(default=900, ge=5, le=7 * 86400)
    # At most this many of one run's questions wait at once; a further one is refused.
    max_open_questions: int = Field(default=3, ge=1, le=20)
    # Commands sent while the bot was away run when it is back, unless older than this.
    catch_up_max_age_s: int = Field(default=3600, ge=0, le=30 * 86400)
    # A requester's commands: this many at once, then one more every refill. Owners (and
    # the console) are never limited: the people who run the bot are always answered.
    rate_limit_burst: int = Field(default=10, ge=1, le=100_000)
    # Seconds until a requester who used the burst may send one more command.
    rate_limit_refill_s: float = Field(default=3.0, ge=0.01, le=3600.0)
    # An operator's split is posted as a plan and waits for an owner's approval
    # (👍, /confirm or "yes") before any child card exists.
    confirm_splits: bool = False
    # What the model runs of one (local) day may cost; reached, no new run starts that day.
    budget_usd_per_day: USD | None = None
    # A question, request or approval unanswered this long is posted again (then daily).
    remind_after_s: int = Field(default=14400, ge=60, le=30 * 86400)
    # "22:00-07:00" in the bot's local time: nobody is mentioned then; None: no quiet hours.
    quiet_hours: str | None = None
    # "09:00" in the bot's local time: one digest a day to every room; None: no digest.
    digest_at: str | None = None
    # The zone routines' times are read in ("Europe/Berlin"), unless their owner set
    # their own in chat (/timezone <zone>); None: the host's zone.
    timezone: str | None = None

    @property
    def remote(self) -> str | None:
        """The git address every worker clones and pushes to; None for a local folder."""
        return self.repo if isinstance(self.repo, str) else None

    @property
    def checkout(self) -> Path:
        """This process's checkout: the folder itself, or its own clone of the remote."""
        return self.workspaces / "clone" if isinstance(self.repo, str) else self.repo

    @property
    def sqlite_file(self) -> Path | None:
        return self.database if isinstance(self.database, Path) else None

    @field_validator("database", "repo")
    @classmethod
    def _addresses(cls, value: Path | str, info: Any) -> Path | str:
        # A string here is an address (the file reader turned file paths into Paths).
        pattern = DATABASE_URL_PATTERN if info.field_name == "database" else GIT_URL_PATTERN
        if isinstance(value, str) and not re.fullmatch(pattern, value):
            shown = value if len(value) <= 60 else value[:57] + "..."
            raise KeyProblem(f"bot.{info.field_name}", f"{shown!r} is not {PATTERN_WORDS[pattern]}")
        if info.field_name == "database" and (problem := database_file_problem(value)):
            raise KeyProblem("bot.database", problem)
        return value

    @field_validator("quiet_hours")
    @classmethod
    def _quiet_hours(cls, value: str | None) -> str | None:
        if value is not None and (why := quiet_problem(value)):
            raise KeyProblem("bot.quiet_hours", why)
        return value

    @field_validator("timezone")
    @classmethod
    def _timezone(cls, value: str | None) -> str | None:
        if value is not None and (why := zone_problem(value)):
            raise KeyProblem("bot.timezone", why)
        return value

    @field_validator("digest_at")
    @classmethod
    def _digest_at(cls, value: str | None) -> str | None:
        if value is not None and (why := daily_problem(value)):
            raise KeyProblem("bot.digest_at", why)
        return value

    @model_validator(mode="after")
    def _password_for_postgres(self) -> BotSection:
        if self.database_password_file is not None and self.sqlite_file is not None:
            raise KeyProblem(
                "bot.database_password_file", "only a postgresql:// database takes a password"
            )
        return self

    @field_validator("owners", "requesters")
    @classmethod
    def _identities(cls, values: list[str]) -> list[str]:
        for value in values:
            problem = identity_problem(value)
            if problem:
                raise ValueError(f"{value!r} is {problem}")
        return values


class ConsoleSection(Section):
    # The person at the terminal acts as this owner identity.
    owner: str | None = None


class DeploySection(Section):
    # Run in the repository after an approved card is merged; {commit} and {slug} are
    # filled in. Empty: the merge is the deployment.
    command: list[str] = []
    # The branch approved cards are merged into; unset: the repository's current one.
    branch: str | None = None
    # The deploy command is stopped after this long.
    timeout_s: int = Field(default=600, ge=1, le=24 * 3600)


class RepoSection(Section):
    # The repository's own git hooks on the bot's commits of an agent's work. Off: a
    # hook is code anyone who could write the repository planted. On: they run in the
    # agents' sandbox (no network, the repository's config and hooks read-only).
    run_hooks: bool = False


class ChecksSection(Section):
    # The repository's own checks, run in the card's worktree (inside the agents'
    # sandbox: no network, no secrets) after each builder or fixer commit; a program and
    # its arguments, no shell. A failure goes back to the agent; empty: no checks. An
    # intent's "Checks:" line overrides it for that card ("Checks: none" for none).
    command: list[str] = []
    # The checks are stopped after this long, and count as failed.
    timeout_s: int = Field(default=600, ge=1, le=6 * 3600)
    # How much of the end of their output the agent, the reviewer and the board get.
    tail_chars: int = Field(default=4000, ge=200, le=64_000)

    @field_validator("command")
    @classmethod
    def _command(cls, value: list[str]) -> list[str]:
        problem = command_problem(value) if value else None
        if problem:
            raise KeyProblem("checks.command", problem)
        return value


class WorkersSection(Section):
    # A running job's lease: a worker that stops renewing it (killed, host gone) loses
    # its jobs to the others after this long.
    lease_s: float = Field(default=60.0, ge=1.0, le=3600.0)
    # How often a worker renews its leases and looks for orphans.
    heartbeat_s: float = Field(default=15.0, ge=0.1, le=600.0)
    # The name this host's workers give (/runs, check); default: the machine's name.
    host: str | None = Field(default=None, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$")

    @model_validator(mode="after")
    def _beat_within_lease(self) -> WorkersSection:
        if self.heartbeat_s * 2 > self.lease_s:
            raise KeyProblem("workers.heartbeat_s", "must be at most half of workers.lease_s")
        return self
