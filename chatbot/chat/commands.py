"""The chat command table: one frozen declaration per command.

Parsing, `/help` and every usage line are generated from `COMMANDS` (maubot's
idea: declare once, derive the rest), so a command cannot be documented one way
and parsed another. Parsing is pure: it knows nothing of the board or of who
asked; `parse` returns either a `CommandCall` or a `UsageProblem` that the
service turns into a localised usage answer.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from enum import StrEnum

from chatbot.domain.checks import SKIP_FLAG
from chatbot.domain.transitions import Action
from chatbot.notify.format import commands_with
from runners.profiles import SLUG_RE

# The prefix texts and usage lines are written with; `shown_with` puts the configured
# first prefix in its place. Clients get in the way of "/" (Element takes an unknown
# /start for its own command), so "!" works as well by default.
PREFIX = "/"
DEFAULT_PREFIXES = ("/", "!")


class Access(StrEnum):
    """Who may use a command. Checked once, before dispatch (see authority.permits)."""

    #: Owners and requesters: it only shows something.
    READ = "read"
    #: Owners act at once; a requester's use becomes a request an owner decides.
    REQUEST = "request"
    #: Owners only: it changes the board.
    OWNER = "owner"


class ArgKind(StrEnum):
    SLUG = "slug"  # a card slug, lower-cased (phone keyboards capitalise)
    TEXT = "text"  # the rest of the message, line breaks kept
    NUMBER = "number"  # a positive integer (a request id)
    CHOICE = "choice"  # one of `choices`
    WORD = "word"  # any single word (a command name for /help)


@dataclass(frozen=True)
class Arg:
    name: str
    kind: ArgKind
    optional: bool = False
    choices: tuple[str, ...] = ()
    #: Free text that may be longer than MAX_TEXT_CHARS: its handler cuts it and says so
    #: (a steer pasted from a log), instead of refusing it whole.
    unbounded: bool = False

    @property
    def usage(self) -> str:
        shown = "|".join(self.choices) if self.choices else f"<{self.name}>"
        return f"[{shown}]" if self.optional else shown


@dataclass(frozen=True)
class Command:
    name: str
    args: tuple[Arg, ...]
    access: Access
    #: Which method carries it out (chat/dispatch.py binds each name to a method of
    #: ChatHandlers or of one of its facets, checked at import); it is called with the
    #: asker's origin and the parsed invocation.
    handler: str
    #: The owner action this command performs on a card, if it is one.
    action: Action | None = None
    #: It speaks to the card's running agent (chat/talking.py), not to its phase: it
    #: works while a builder or fixer runs, whatever the transition table says.
    on_run: bool = False

    @property
    def usage(self) -> str:
        return " ".join([f"{PREFIX}{self.name}", *(a.usage for a in self.args)])

    @property
    def help_key(self) -> str:
        return f"cmd_{self.name}"


SLUG = Arg("slug", ArgKind.SLUG)
SKIP_CHECKS = Arg("checks", ArgKind.CHOICE, optional=True, choices=(SKIP_FLAG,))

# What `/inspect <slug> status|route` sends the inspector as its mode.
INSPECT_MODES: dict[str, str] = {"status": "implementation_status", "route": "route_next"}
WEB_CHOICES = ("sessions", "revoke")
ROUTINE_CHOICES = ("pause", "resume", "delete")

COMMANDS: tuple[Command, ...] = (
    Command("help", (Arg("command", ArgKind.WORD, optional=True),), Access.READ, "help"),
    Command("status", (Arg("slug", ArgKind.SLUG, optional=True),), Access.READ, "status"),
    Command("start", (SLUG,), Access.REQUEST, "move", Action.START),
    Command("draft", (Arg("text", ArgKind.TEXT),), Access.REQUEST, "draft"),
    Command("answer", (SLUG, Arg("text", ArgKind.TEXT)), Access.OWNER, "answer", Action.ANSWER),
    Command("split", (SLUG,), Access.OWNER, "move", Action.SPLIT),
    # Approves an operator's split plan (`confirm_splits`); /accept is for requests.
    Command("confirm", (SLUG,), Access.OWNER, "move", Action.CONFIRM),
    Command("research", (SLUG,), Access.REQUEST, "move", Action.RESEARCH),
    Command(
        "inspect",
        (SLUG, Arg("mode", ArgKind.CHOICE, optional=True, choices=tuple(INSPECT_MODES))),
        Access.OWNER,
        "move",
        Action.INSPECT,
    ),
    Command("fix", (SLUG,), Access.OWNER, "move", Action.FIX),
    # --skip-checks: a commit whose checks did not pass goes on once (domain/checks.py).
    Command("retry", (SLUG, SKIP_CHECKS), Access.OWNER, "move", Action.RETRY),
    Command("cancel", (SLUG,), Access.OWNER, "move", Action.CANCEL),
    Command("archive", (SLUG,), Access.OWNER, "move", Action.ARCHIVE),
    Command("deploy", (SLUG, SKIP_CHECKS), Access.OWNER, "move", Action.DEPLOY),
    Command(
        "log",
        (SLUG, Arg("as", ArgKind.CHOICE, optional=True, choices=("--file",))),
        Access.READ,
        "log",
    ),
    # Files sent with it (or just before) for a card (chat/attaching.py).
    Command("attach", (SLUG,), Access.REQUEST, "attach"),
    Command("diff", (SLUG, Arg("page", ArgKind.NUMBER, optional=True)), Access.READ, "diff"),
    # A line comment: the fixer's next task, or a steer to the running agent.
    Command(
        "comment",
        (SLUG, Arg("file:line", ArgKind.WORD), Arg("text", ArgKind.TEXT)),
        Access.REQUEST,
        "comment",
        Action.COMMENT,
    ),
    Command("runs", (Arg("pipeline", ArgKind.WORD, optional=True),), Access.READ, "runs"),
    Command("accept", (Arg("request", ArgKind.NUMBER),), Access.OWNER, "decide"),
    Command("decline", (Arg("request", ArgKind.NUMBER),), Access.OWNER, "decide"),
    Command("budget", (), Access.READ, "budget"),
    Command("inbox", (), Access.READ, "inbox"),
    # Routines: a command that starts work, on a schedule (chat/routines.py).
    Command("every", (Arg("when+command", ArgKind.TEXT),), Access.OWNER, "every"),
    Command("at", (Arg("when+command", ArgKind.TEXT),), Access.OWNER, "at"),
    Command("routines", (), Access.READ, "routines"),
    Command(
        "routine",
        (Arg("what", ArgKind.CHOICE, choices=ROUTINE_CHOICES), Arg("id", ArgKind.NUMBER)),
        Access.OWNER,
        "routine",
    ),
    # An owner's own zone for the routines they make (chat/routines.py).
    Command("timezone", (Arg("zone", ArgKind.WORD, optional=True),), Access.OWNER, "timezone"),
    Command("why", (SLUG,), Access.READ, "why"),
    Command(
        "allow", (Arg("slug", ArgKind.SLUG, optional=True),), Access.OWNER, "allow", Action.ALLOW
    ),
    # Talking to a running agent (chat/talking.py).
    Command(
        "steer",
        (SLUG, Arg("text", ArgKind.TEXT, unbounded=True)),
        Access.OWNER,
        "steer",
        Action.STEER,
        on_run=True,
    ),
    Command("approve", (SLUG,), Access.OWNER, "approve", on_run=True),
    Command(
        "deny",
        (SLUG, Arg("reason", ArgKind.TEXT, optional=True)),
        Access.OWNER,
        "deny",
        on_run=True,
    ),
    Command("interrupt", (SLUG,), Access.OWNER, "interrupt", on_run=True),
    # Signing in to the web board (chat/web_signin.py): a link, the sessions, ending them.
    Command(
        "web",
        (
            Arg("what", ArgKind.CHOICE, optional=True, choices=WEB_CHOICES),
            # A session's number or "all" (web_signin.py reads which).
            Arg("which", ArgKind.WORD, optional=True),
        ),
        Access.OWNER,
        "web",
    ),
)

BY_NAME: dict[str, Command] = {c.name: c for c in COMMANDS}
# The command that performs an owner action, for "allowed: /start, /split" answers.
FOR_ACTION: dict[Action, Command] = {c.action: c for c in COMMANDS if c.action is not None}

ArgValue = str | int | None


@dataclass(frozen=True)
class CommandCall:
    """A command as typed: which one, and its parsed arguments (not a CLI run: that is
    `runners.runtimes.Invocation`)."""

    command: Command
    args: dict[str, ArgValue] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.command.name

    def text(self, name: str) -> str:
        value = self.args.get(name)
        return "" if value is None else str(value)

    def number(self, name: str) -> int:
        value = self.args[name]
        assert isinstance(value, int)
        return value


MAX_TEXT_CHARS = 4000


class Problem(StrEnum):
    """Why a message is not a valid command; each has a catalogue text `problem_<value>`."""

    UNKNOWN_COMMAND = "unknown_command"
    MISSING = "missing"
    BAD_SLUG = "bad_slug"
    BAD_NUMBER = "bad_number"
    BAD_CHOICE = "bad_choice"
    TOO_MANY = "too_many"
    TOO_LONG = "too_long"


@dataclass(frozen=True)
class UsageProblem:
    problem: Problem
    #: The command whose usage line to show; None for an unknown command.
    command: Command | None
    #: The offending word (or argument name for MISSING).
    value: str = ""
    #: Command names close to an unknown one.
    suggestions: tuple[str, ...] = ()


def is_command(text: str, prefixes: tuple[str, ...] = DEFAULT_PREFIXES) -> bool:
    """A message is a command when it starts with the prefix and a name of letters.

    So "/etc/hosts is broken" or "/x2" in a room is conversation,
    not an unknown command the bot would answer.
    """
    stripped = text.lstrip()
    return any(
        stripped.startswith(prefix) and _NAME_RE.match(stripped, len(prefix)) is not None
        for prefix in prefixes
    )


def parse(text: str, prefixes: tuple[str, ...] = DEFAULT_PREFIXES) -> CommandCall | UsageProblem:
    """Parse one message that `is_command`; never raises."""
    head, remaining = _first_word(text)
    used = next((p for p in sorted(prefixes, key=len, reverse=True) if head.startswith(p)), "")
    name = head[len(used) :].lower()
    command = BY_NAME.get(name)
    if command is None:
        close = difflib.get_close_matches(name, list(BY_NAME), n=3, cutoff=0.6)
        return UsageProblem(Problem.UNKNOWN_COMMAND, None, name, tuple(close))
    args: dict[str, ArgValue] = {}
    for arg in command.args:
        if arg.kind is ArgKind.TEXT:
            value, remaining = remaining, ""
        else:
            value, remaining = _first_word(remaining)
        if not value:
            if arg.optional:
                args[arg.name] = None
                continue
            return UsageProblem(Problem.MISSING, command, arg.name)
        checked = _check(arg, value)
        if isinstance(checked, Problem):
            return UsageProblem(checked, command, value)
        args[arg.name] = checked
    if remaining:
        return UsageProblem(Problem.TOO_MANY, command, remaining.split()[0])
    return CommandCall(command, args)


def _first_word(text: str) -> tuple[str, str]:
    """The first word and the rest, split at any whitespace (a line break too)."""
    parts = text.strip().split(maxsplit=1)
    if not parts:
        return "", ""
    return parts[0], parts[1].strip() if len(parts) > 1 else ""


def _check(arg: Arg, value: str) -> ArgValue | Problem:
    if arg.kind is ArgKind.SLUG:
        slug = value.lower()
        return slug if SLUG_RE.fullmatch(slug) else Problem.BAD_SLUG
    if arg.kind is ArgKind.NUMBER:
        digits = value.removeprefix("#")
        if digits.isascii() and digits.isdigit() and 0 < int(digits) < 2**63:
            return int(digits)
        return Problem.BAD_NUMBER
    if arg.kind is ArgKind.CHOICE:
        choice = value.lower()
        return choice if choice in arg.choices else Problem.BAD_CHOICE
    if arg.kind is ArgKind.WORD:
        word = value.lower()
        return next((word[len(p) :] for p in DEFAULT_PREFIXES if word.startswith(p)), word)
    # Free text becomes part of a prompt and of the card's history: bounded.
    return value if len(value) <= MAX_TEXT_CHARS or arg.unbounded else Problem.TOO_LONG


_NAME_RE = re.compile(r"[A-Za-z]+(?:\s|$)")
NAMES = tuple(c.name for c in COMMANDS)


def shown_with(text: str, prefix: str) -> str:
    """`text` with its commands written with `prefix` instead of "/"."""
    return commands_with(text, prefix, NAMES)
