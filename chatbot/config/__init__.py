"""Configuration: one TOML file, validated strictly, secrets read from files it names.

Every error names the file, the key and the problem, because the person reading it
is usually on a phone looking at a service log.
"""

from __future__ import annotations

import logging
import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, StringConstraints, ValidationError, model_validator

from chatbot.config.agents import EscalationSection, LaneSection, RoleSection, RuntimeSection
from chatbot.config.base import ConfigError, RuntimeName, Section
from chatbot.config.bot import (
    BotSection,
    ChecksSection,
    ConsoleSection,
    DeploySection,
    RepoSection,
    WorkersSection,
)
from chatbot.config.chat import MatrixSection, XmppSection
from chatbot.config.deprecated import Deprecated, set_aside
from chatbot.config.files import FilesSection
from chatbot.config.routines import RoutineList, unique_names
from chatbot.config.transcription import TranscriptionSection
from chatbot.config.web import WebSection
from chatbot.config_file import NAME_RE, KeyProblem, describe, resolve_paths
from chatbot.domain.budgets import Budgets
from chatbot.domain.roles import BY_NAME as ROLES_BY_NAME
from chatbot.domain.roles import ROLES, ProfileFrom
from chatbot.secret_files import SecretFileError, check_secret_files, read_secret
from chatbot.transports.networks import NETWORKS
from runners.profiles import AllowedProfiles, LaneProfile
from runners.runtimes.registry import RUNTIMES

log = logging.getLogger(__name__)

ROLE_NAMES = tuple(role.name for role in ROLES)
# Roles that run with the card's lane profile ([lanes.*]), not a [roles.*] section of their own.
LANE_ROLES = tuple(role.name for role in ROLES if role.profile_from is ProfileFrom.LANE)


class Config(Section):
    bot: BotSection
    xmpp: XmppSection | None = None
    matrix: MatrixSection | None = None
    console: ConsoleSection | None = None
    runtimes: dict[RuntimeName, RuntimeSection] = {}
    lanes: dict[Annotated[str, StringConstraints(pattern=NAME_RE)], LaneSection] = Field(
        min_length=1
    )
    # mypy cannot read a Literal of a tuple built at import; pydantic checks it.
    roles: dict[Literal[ROLE_NAMES], RoleSection] = {}  # type: ignore[valid-type]
    escalation: EscalationSection = EscalationSection()
    deploy: DeploySection | None = None
    repo: RepoSection = RepoSection()
    checks: ChecksSection = ChecksSection()
    web: WebSection | None = None
    workers: WorkersSection = WorkersSection()
    files: FilesSection = FilesSection()
    # Routines kept with the deployment (config/routines.py).
    routines: RoutineList
    transcription: TranscriptionSection | None = None
    # Where the file was read from; relative paths in it are resolved against it.
    source: Path = Field(default=Path("."), exclude=True)
    # Keys an earlier release accepted that were taken out before validation.
    deprecated: tuple[Deprecated, ...] = Field(default=(), exclude=True)

    @model_validator(mode="after")
    def _runtimes_exist(self) -> Config:
        for name, lane in self.lanes.items():
            if lane.runtime not in self.runtimes:
                raise KeyProblem(
                    f"lanes.{name}.runtime",
                    f"runtime {lane.runtime!r} has no [runtimes.{lane.runtime}] section",
                )
            if lane.fallback is not None and (
                lane.fallback == name or lane.fallback not in self.lanes
            ):
                raise KeyProblem(
                    f"lanes.{name}.fallback",
                    f"{lane.fallback!r} is not another configured lane "
                    f"(lanes: {', '.join(sorted(self.lanes))})",
                )
        for name in ROLE_NAMES:
            given = self.roles[name].model_fields_set if name in self.roles else set()
            if name in LANE_ROLES and given - {"approvals"}:
                # Its profile is the lane's; only what it may be allowed is its own.
                problem = (
                    f"the {name} runs with the card's lane ([lanes.*]); "
                    f"only approvals may be set here"
                )
                raise KeyProblem(f"roles.{name}.{sorted(given - {'approvals'})[0]}", problem)
            if name in LANE_ROLES:
                continue
            runtime = self.role(name).runtime
            if runtime not in self.runtimes:
                raise KeyProblem(
                    f"roles.{name}.runtime",
                    f"runtime {runtime!r} has no [runtimes.{runtime}] section",
                )
        for runtime in self.escalation.models:
            if runtime not in self.runtimes:
                raise KeyProblem(f"escalation.models.{runtime}", "no such runtime is configured")
        # Each runtime's record says what its key file must be; in the registry's order.
        for name, record in RUNTIMES.items():
            section = self.runtimes.get(name)
            if section is None:
                continue
            key_problem = record.key_file.problem_with(section.api_key_file, section.base_url)
            if key_problem:
                raise KeyProblem(f"runtimes.{name}.api_key_file", key_problem)
        return self

    @model_validator(mode="after")
    def _routines_fit(self) -> Config:
        """Each routine runs as one of the owners, in one of the configured rooms."""
        unique_names(self.routines)
        # getattr: the sections the networks' records name, and their rooms if they have any
        sections = [getattr(self, network.section, None) for network in NETWORKS.values()]
        rooms = [room for section in sections for room in getattr(section, "rooms", None) or []]
        for entry in self.routines:
            if entry.owner not in self.bot.owners:
                raise KeyProblem(
                    f"routines.{entry.name}.owner",
                    f"{entry.owner!r} is none of bot.owners ({', '.join(self.bot.owners)})",
                )
            if entry.room and entry.room not in rooms:
                raise KeyProblem(
                    f"routines.{entry.name}.room",
                    f"{entry.room!r} is none of the rooms ({', '.join(rooms) or 'none'})",
                )
        return self

    def role(self, name: str) -> RoleSection:
        return self.roles.get(name) or RoleSection()

    def approvals(self, name: str) -> str:
        """ "ask" or "deny": what the bot does with an approval its agent asks for."""
        return self.role(name).approvals or ROLES_BY_NAME[name].approvals_default

    def budgets(self) -> Budgets:
        budgets = {name: lane.budget_usd_per_card for name, lane in self.lanes.items()}
        per_card = {name: usd for name, usd in budgets.items() if usd is not None}
        return Budgets(self.bot.budget_usd_per_day, per_card)

    def allowed_profiles(self) -> AllowedProfiles:
        return AllowedProfiles(
            lanes={
                name: LaneProfile(
                    lane=name,
                    runtime=lane.runtime,
                    model=lane.model,
                    reasoning_effort=lane.reasoning_effort,
                    iteration_limit=lane.iteration_limit,
                    concurrency=lane.concurrency,
                )
                for name, lane in self.lanes.items()
            },
            escalation_models={rt: tuple(models) for rt, models in self.escalation.models.items()},
        )

    @property
    def files_folder(self) -> Path:
        """Where kept files live: [files] folder, else `files` in the bot's state folder
        (beside the SQLite file; with PostgreSQL, beside this host's workspaces)."""
        if self.files.folder is not None:
            return self.files.folder
        sqlite = self.bot.sqlite_file
        return (sqlite.parent if sqlite is not None else self.bot.workspaces.parent) / "files"

    @property
    def console_owner(self) -> str | None:
        """Whom the person at the console acts as, when there is a console."""
        if self.console is None:
            return None
        return self.console.owner or self.bot.owners[0]

    @property
    def transports(self) -> list[str]:
        # getattr: the section each network's record names (transports/networks.py)
        return [n.name for n in NETWORKS.values() if getattr(self, n.section) is not None]

    def secret_files(self) -> dict[str, Path]:
        """Every secret file the configuration names, by the key that names it."""
        found: dict[str, Path] = {}
        if self.bot.database_password_file is not None:
            found["bot.database_password_file"] = self.bot.database_password_file
        if self.xmpp:
            found["xmpp.password_file"] = self.xmpp.password_file
        if self.matrix:
            for key in ("password_file", "access_token_file", "store_key_file"):
                # getattr: [matrix]'s secret-file keys, read by the names they are reported by
                value = getattr(self.matrix, key)
                if value is not None:
                    found[f"matrix.{key}"] = value
        for name, runtime in self.runtimes.items():
            if runtime.api_key_file is not None:
                found[f"runtimes.{name}.api_key_file"] = runtime.api_key_file
        if self.web:
            found.update(self.web.metrics_tokens)
        if self.transcription and self.transcription.api_key_file is not None:
            found["transcription.api_key_file"] = self.transcription.api_key_file
        return found

    def secret_values(self) -> dict[str, str]:
        """The value of each secret file, by the key that names it, read now (a rotated
        file counts at once); one that cannot be read is left out (check says why)."""
        values = {}
        for key, path in self.secret_files().items():
            try:
                values[key] = read_secret(path)
            except SecretFileError:
                continue
        return values

    def redacted(self) -> dict[str, Any]:
        """The effective configuration for printing: secret files by path, never by value."""
        return self.model_dump(mode="json", exclude_none=True)


def parse_config(text: str, file: Path, *, secrets: bool = True) -> Config:
    """Validate TOML text as if read from `file` (paths resolve against its folder);
    with `secrets`, also that every secret file it names is there and not empty."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{file}: not valid TOML: {error}") from None
    deprecated = set_aside(data)
    base = file.resolve().parent
    problem = resolve_paths(data, base, Config)
    if problem is not None:
        raise ConfigError(f"{file}: {problem}")
    try:
        config = Config.model_validate({**data, "source": file.resolve(), "deprecated": deprecated})
    except ValidationError as error:
        raise ConfigError(describe(error, file, Config)) from None
    if secrets:
        try:
            check_secret_files(config.secret_files(), file)
        except SecretFileError as error:
            raise ConfigError(str(error)) from None
    return config


def load_config(path: str | Path) -> Config:
    file = Path(path)
    try:
        data = file.read_bytes()
    except FileNotFoundError:
        raise ConfigError(f"{file}: configuration file does not exist") from None
    except OSError as error:
        raise ConfigError(f"{file}: cannot read configuration: {error.strerror}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise ConfigError(
            f"{file}: line {line}: not UTF-8 text (TOML must be); save the file as UTF-8"
        ) from None
    config = parse_config(text, file)
    for found in config.deprecated:
        log.warning("%s: %s", file, found.line())
    return config


__all__ = [
    "BotSection",
    "ChecksSection",
    "Config",
    "ConfigError",
    "Deprecated",
    "ConsoleSection",
    "DeploySection",
    "EscalationSection",
    "FilesSection",
    "LaneSection",
    "MatrixSection",
    "RoleSection",
    "RuntimeName",
    "RuntimeSection",
    "WebSection",
    "WorkersSection",
    "XmppSection",
    "load_config",
    "parse_config",
]
