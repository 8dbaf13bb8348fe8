"""Talking to a running agent: what the bot sends it, what it asks the bot.

A run started with a `Conversation` goes through its CLI's interactive protocol
(`Talking` on the runtime's record: codex `app-server`, Claude Code stream-json)
instead of a one-shot `exec`/`-p`. The bot's side puts steers and interrupts in
(`steer`, `interrupt`) and answers the agent's approval requests (`decide`, a
coroutine the bot supplies); the runtime's driver takes them out (`next`) and
tells the bot what became of them (`tell`). The driver never decides anything
itself: a request nobody allows is denied, and the final answer is still parsed
strictly from the whole output once the run ended.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

# Talking (a runtime's protocol) lives on the record's module; named here for drivers.
from runners.runtimes.base import (
    Talking,  # noqa: F401
    validate_images,
)

#: Imported names other modules take from here: part of this module's interface.
__all__ = [
    "Talking",
]

#: What a steer may carry to a CLI; a longer text is cut by the bot, which says so.
MAX_STEER_CHARS = 16 * 1024


@dataclass(frozen=True, slots=True)
class Steer:
    """A user message for the agent's current turn; `key` names it in `Taken`/`Refused`.
    `images` go with it as pictures, by absolute path, as `RunRequest.images` go with the
    prompt (codex: `localImage` items of `turn/steer`; claude: image blocks)."""

    text: str = field(repr=False)
    key: str
    images: tuple[Path, ...] = ()


@dataclass(frozen=True, slots=True)
class Interrupt:
    """Stop the current turn; the session stays (it can be resumed)."""


@dataclass(frozen=True, slots=True)
class ApprovalAsked:
    """The agent asks to do something its grants do not cover.

    `command` is the exact command (codex: the raw command of `commandActions`, else the
    shell-wrapped one; claude: `input.command` of a Bash call) or, for another tool,
    its input as compact JSON. `tool` is the CLI's name for what is asked
    ("command", "file_change", or a claude tool name such as "Bash", "Write").
    """

    key: str
    tool: str
    command: str = field(repr=False)
    cwd: str = ""
    reason: str = ""


@dataclass(frozen=True, slots=True)
class Decision:
    allow: bool
    #: Why it was denied; it reaches the agent (claude: the deny message; codex: steered first).
    reason: str = ""


@dataclass(frozen=True, slots=True)
class Delivered:
    """The CLI has this steer (claude: `command_lifecycle` `queued` with its uuid; codex:
    the answer to its `turn/steer`): from now on its next model request carries it, and
    the bot's "steered by" says no more than that. Before this it may still be on its way
    in a pipe. A driver that cannot tell says `Taken` alone."""

    key: str


@dataclass(frozen=True, slots=True)
class Taken:
    """The agent took this steer (claude: its replay; codex: the next item of the turn)."""

    key: str


@dataclass(frozen=True, slots=True)
class Refused:
    """A steer that could not be delivered (no turn is running any more); `why` says so."""

    key: str
    why: str


Told = Delivered | Taken | Refused

Decide = Callable[[ApprovalAsked], Awaitable[Decision]]


class Conversation:
    """One run's line between the bot and its driver. Made by the bot, used by both."""

    def __init__(self, decide: Decide, on_told: Callable[[Told], None] | None = None) -> None:
        self._decide = decide
        self._on_told = on_told
        self._inbox: asyncio.Queue[Steer | Interrupt] = asyncio.Queue()
        self.interrupted = False

    # --- the bot's side ------------------------------------------------------------

    def steer(self, text: str, key: str, images: Sequence[Path] = ()) -> None:
        """Send the agent `text` (cut at MAX_STEER_CHARS) with `images`; `InvalidRequest`
        for images no CLI may be given (`validate_images`), before anything is sent."""
        pictures = tuple(images)
        validate_images(pictures)
        self._inbox.put_nowait(Steer(text[:MAX_STEER_CHARS], key, pictures))

    def interrupt(self) -> None:
        self._inbox.put_nowait(Interrupt())

    # --- the driver's side ---------------------------------------------------------

    async def next(self) -> Steer | Interrupt:
        """The next thing the bot sends; waits until there is one."""
        return await self._inbox.get()

    def pending(self) -> list[Steer | Interrupt]:
        """Everything sent and not yet taken out, taken out now (a run ending refuses them)."""
        items = []
        while not self._inbox.empty():
            items.append(self._inbox.get_nowait())
        return items

    async def decide(self, asked: ApprovalAsked) -> Decision:
        """The bot's answer to an approval request. A bot that fails to decide denies."""
        try:
            return await self._decide(asked)
        except asyncio.CancelledError:
            raise
        except Exception as error:  # noqa: BLE001 - never allow by accident
            return Decision(False, f"the bot could not decide: {error}")

    def tell(self, told: Told) -> None:
        if self._on_told is not None:
            self._on_told(told)
