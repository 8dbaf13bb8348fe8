"""Configuration: one TOML file, validated strictly, secrets read from files it names.

Every error names the file, the key and the problem, because the person reading it
is usually on a phone looking at a service log.
"""

from __future__ import annotations

import ipaddress
import re
import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    field_validator,
    model_validator,
)

from chatbot.config_file import (
    DATABASE_URL_PATTERN,
    ENV_NAME,
    GIT_URL_PATTERN,
    HOMESERVER_PATTERN,
    LISTEN_PATTERN,
    MATRIX_ROOM_RE,
    MATRIX_USER_RE,
    NAME_RE,
    PATTERN_WORDS,
    PREFIX_PATTERN,
    XMPP_BARE_JID_RE,
    KeyProblem,
    database_file_problem,
    describe,
    listen_problem,
    resolve_paths,
)
from chatbot.domain.budgets import Budgets
from chatbot.domain.roles import ROLES, ProfileFrom
from chatbot.secret_files import SecretFileError, check_secret_files
from runners.profiles import (
    ITERATION_LIMIT_MAX,
    ITERATION_LIMIT_MIN,
    MODEL_PATTERN,
    REASONING_EFFORT_PATTERN,
    AllowedProfiles,
    LaneProfile,
)
from runners.runtimes.base import BASE_URL_PATTERN

ROLE_NAMES = tuple(role.name for role in ROLES)
# Roles that run with the card's lane profile ([lanes.*]), not a [roles.*] section of their own.
LANE_ROLES = tuple(role.name for role in ROLES if role.profile_from is ProfileFrom.LANE)
USD = Annotated[float, Field(ge=0, le=1_000_000)]

# "" means "the CLI's default model".
ModelName = Annotated[str, StringConstraints(pattern=f"^$|{MODEL_PATTERN}")]
Effort = Annotated[str, StringConstraints(pattern=REASONING_EFFORT_PATTERN)]
EnvName = Annotated[str, StringConstraints(pattern=ENV_NAME)]
RuntimeName = Literal["codex", "claude", "openrouter"]


class ConfigError(Exception):
    """The configuration cannot be used; the message says where and why."""


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


def _identity_problem(value: str) -> str | None:
    if value.startswith("@"):
        return None if MATRIX_USER_RE.fullmatch(value) else "not a Matrix user id (@name:server)"
    return None if XMPP_BARE_JID_RE.fullmatch(value) else "not a bare JID (name@server)"


class BotSection(_Section):
    owners: list[str] = Field(min_length=1)
    requesters: list[str] = []
    # A SQLite file (one host), or a PostgreSQL address shared by the bot and workers.
    database: Path | str = Path("var/board.sqlite3")
    database_password_file: Path | None = None
    # A folder (one host), or a git address: then each process keeps its own clone.
    repo: Path | str
    locale: Literal["en", "de"] = "en"
    keep_transcripts: bool = False
    workspaces: Path = Path("var/workspaces")
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
    # Commands sent while the bot was away run when it is back, unless older than this.
    catch_up_max_age_s: int = Field(default=3600, ge=0, le=30 * 86400)
    # What the model runs of one (local) day may cost; reached, no new run starts that day.
    budget_usd_per_day: USD | None = None

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
            problem = _identity_problem(value)
            if problem:
                raise ValueError(f"{value!r} is {problem}")
        return values


class XmppSection(_Section):
    jid: str = Field(pattern=XMPP_BARE_JID_RE.pattern)
    password_file: Path
    host: str | None = None
    port: int = Field(default=5222, ge=1, le=65535)
    rooms: list[str] = []
    nick: str = Field(default="board", min_length=1, max_length=64)
    # "starttls" (default), "direct" (TLS from the first byte) or "none" (loopback only).
    tls: Literal["starttls", "direct", "none"] = "starttls"
    ca_certs: Path | None = None
    # Longer messages are cut to fit; a stanza over the server's limit costs the stream.
    max_stanza_bytes: int = Field(default=10_000, ge=2_000, le=10_000_000)

    @field_validator("rooms")
    @classmethod
    def _rooms(cls, values: list[str]) -> list[str]:
        for value in values:
            if not XMPP_BARE_JID_RE.fullmatch(value):
                raise ValueError(f"{value!r} is not a room JID (room@conference.server)")
        return values


class MatrixSection(_Section):
    homeserver: str = Field(pattern=HOMESERVER_PATTERN)
    user_id: str = Field(pattern=MATRIX_USER_RE.pattern)
    password_file: Path | None = None
    access_token_file: Path | None = None
    device_name: str = "intent-board"
    rooms: list[str] = []
    # End-to-end encryption keys (nio's crypto store); default: beside bot.database.
    crypto_store: Path | None = None
    # "tofu": an owner's devices count as first seen; "verified": only devices
    # verified by SAS emoji verification or the owner's cross-signing.
    trust: Literal["tofu", "verified"] = "tofu"

    @field_validator("rooms")
    @classmethod
    def _rooms(cls, values: list[str]) -> list[str]:
        for value in values:
            if not MATRIX_ROOM_RE.fullmatch(value):
                raise ValueError(f"{value!r} is not a room alias or id (#room:server, !id:server)")
        return values

    @model_validator(mode="after")
    def _one_credential(self) -> MatrixSection:
        if (self.password_file is None) == (self.access_token_file is None):
            raise ValueError("give exactly one of password_file or access_token_file")
        return self


class ConsoleSection(_Section):
    # The person at the terminal acts as this owner identity.
    owner: str | None = None


class RuntimeSection(_Section):
    binary: str = Field(min_length=1)
    # The key the CLI sends to its model provider; read when a run starts, put only
    # into that run's environment (openrouter: required; claude: ANTHROPIC_API_KEY;
    # codex: only together with base_url).
    api_key_file: Path | None = None
    # Another model provider: an OpenAI-compatible Responses endpoint for codex and
    # openrouter (".../v1"), an Anthropic-compatible API for claude.
    base_url: str | None = Field(default=None, pattern=BASE_URL_PATTERN)
    # Names of variables of the bot's own environment the CLI also gets (its login
    # lives in e.g. CODEX_HOME); everything else is withheld from the child.
    pass_env: list[EnvName] = []
    # Plain, non-secret variables for the CLI; a value starting with ./ or ../ is a
    # path relative to this file. Secrets never go here: use api_key_file.
    env: dict[EnvName, str] = {}
    # For a CLI that reports no cost (codex): a run costs its tokens at these prices.
    usd_per_million_input_tokens: USD | None = None
    usd_per_million_output_tokens: USD | None = None


class LaneSection(_Section):
    runtime: RuntimeName
    model: ModelName
    reasoning_effort: Effort = ""
    iteration_limit: int = Field(ge=ITERATION_LIMIT_MIN, le=ITERATION_LIMIT_MAX)
    concurrency: int = Field(default=1, ge=1, le=16)
    timeout_s: int = Field(default=3600, ge=1, le=24 * 3600)  # per agent turn
    idle_timeout_s: int = Field(default=900, ge=1, le=24 * 3600)
    # What all runs of one card in this lane may cost; reached, no new run starts for it.
    budget_usd_per_card: USD | None = None


class RoleSection(_Section):
    runtime: RuntimeName = "codex"
    model: ModelName = ""
    reasoning_effort: Effort = ""
    timeout_s: int = Field(default=1200, ge=1, le=24 * 3600)
    idle_timeout_s: int = Field(default=600, ge=1, le=24 * 3600)


class EscalationSection(_Section):
    models: dict[RuntimeName, list[ModelName]] = {}


class DeploySection(_Section):
    command: list[str] = []
    branch: str | None = None
    timeout_s: int = Field(default=600, ge=1, le=24 * 3600)


class WorkersSection(_Section):
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


class WebSection(_Section):
    # The live board (chatbot/web): where it listens, and the file holding its token.
    listen: str = Field(default="127.0.0.1:8080", pattern=LISTEN_PATTERN)
    token_file: Path
    # Connections at once; the board takes at most a quarter of the process's descriptors.
    max_connections: int = Field(default=256, ge=4, le=65536)
    # Peers whose X-Forwarded-Proto / Forwarded: proto=https count (a TLS proxy in front).
    trusted_proxies: list[str] = ["127.0.0.1/8", "::1"]

    @field_validator("trusted_proxies")
    @classmethod
    def _networks(cls, values: list[str]) -> list[str]:
        for value in values:
            try:
                ipaddress.ip_network(value, strict=False)
            except ValueError:
                raise KeyProblem(
                    "web.trusted_proxies",
                    f"{value!r} is not an IP address or network (like 10.0.0.5 or 10.0.0.0/8)",
                ) from None
        return values

    @field_validator("listen")
    @classmethod
    def _listen(cls, value: str) -> str:
        problem = listen_problem(value)
        if problem:
            raise KeyProblem("web.listen", problem)
        return value


class Config(_Section):
    bot: BotSection
    xmpp: XmppSection | None = None
    matrix: MatrixSection | None = None
    console: ConsoleSection | None = None
    runtimes: dict[RuntimeName, RuntimeSection] = {}
    lanes: dict[Annotated[str, StringConstraints(pattern=NAME_RE)], LaneSection] = Field(
        min_length=1
    )
    roles: dict[Literal[ROLE_NAMES], RoleSection] = {}  # type: ignore[valid-type]
    escalation: EscalationSection = EscalationSection()
    deploy: DeploySection | None = None
    web: WebSection | None = None
    workers: WorkersSection = WorkersSection()
    # Where the file was read from; relative paths in it are resolved against it.
    source: Path = Field(default=Path("."), exclude=True)

    @model_validator(mode="after")
    def _runtimes_exist(self) -> Config:
        for name, lane in self.lanes.items():
            if lane.runtime not in self.runtimes:
                raise KeyProblem(
                    f"lanes.{name}.runtime",
                    f"runtime {lane.runtime!r} has no [runtimes.{lane.runtime}] section",
                )
        for name in ROLE_NAMES:
            if name in LANE_ROLES and name in self.roles:
                problem = f"the {name} runs with the card's lane ([lanes.*]); remove this section"
                raise KeyProblem(f"roles.{name}", problem)
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
        codex = self.runtimes.get("codex")
        if codex is not None and codex.api_key_file is not None and codex.base_url is None:
            raise KeyProblem(
                "runtimes.codex.api_key_file",
                "codex uses its own login (CODEX_HOME); a key file needs base_url too",
            )
        openrouter = self.runtimes.get("openrouter")
        if openrouter is not None and openrouter.api_key_file is None:
            raise KeyProblem(
                "runtimes.openrouter.api_key_file", "required for the OpenRouter runtime"
            )
        return self

    def role(self, name: str) -> RoleSection:
        return self.roles.get(name) or RoleSection()  # type: ignore[call-overload]

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
    def console_owner(self) -> str | None:
        """Whom the person at the console acts as, when there is a console."""
        if self.console is None:
            return None
        return self.console.owner or self.bot.owners[0]

    @property
    def transports(self) -> list[str]:
        names = [n for n in ("xmpp", "matrix") if getattr(self, n) is not None]
        if self.console is not None:
            names.append("console")
        return names

    def secret_files(self) -> dict[str, Path]:
        """Every secret file the configuration names, by the key that names it."""
        found: dict[str, Path] = {}
        if self.bot.database_password_file is not None:
            found["bot.database_password_file"] = self.bot.database_password_file
        if self.xmpp:
            found["xmpp.password_file"] = self.xmpp.password_file
        if self.matrix:
            for key in ("password_file", "access_token_file"):
                value = getattr(self.matrix, key)
                if value is not None:
                    found[f"matrix.{key}"] = value
        for name, runtime in self.runtimes.items():
            if runtime.api_key_file is not None:
                found[f"runtimes.{name}.api_key_file"] = runtime.api_key_file
        if self.web:
            found["web.token_file"] = self.web.token_file
        return found

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
    base = file.resolve().parent
    problem = resolve_paths(data, base, Config)
    if problem is not None:
        raise ConfigError(f"{file}: {problem}")
    try:
        config = Config.model_validate({**data, "source": file.resolve()})
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
    return parse_config(text, file)
