"""Console transport: the person at the terminal is the owner.

The embedded default for trying the bot without a chat server, and the
in-process transport for unit tests (errbot `testbot` style): `push()` a line
as if typed, `pop()` what the bot said. Every message in either direction gets
a number, so the owner can point at it:

    text           a message
    >3 yes         a reply to message 3
    +3 👍          react to message 3 (also `+1 3 👍`); `-3 👍` takes it back
    +3 2, +3 +1    a key typed plainly: option 2 (2️⃣), 👍 (and `-1` 👎)
    *3 new text    correct message 3 (an edit, which the bot may refuse)

A line that starts like one of these but is not one (`+3`, `>3`, `+3 yes`) is not
sent: the owner gets a one-line hint. /help ends with this syntax (console_texts.py).

Numbers start at 1 with every start, so the ids behind them carry a token of
this session: message 7 of today is never taken for message 7 of yesterday,
whose card the board still remembers.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import sys
import threading
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, TextIO

from .base import (
    Envelope,
    EventHandler,
    Identity,
    IncomingEdit,
    IncomingEvent,
    IncomingMessage,
    IncomingReaction,
    Outgoing,
    Target,
    Transport,
)
from .console_texts import hint, syntax_help
from .files import OutgoingFile
from .network import Network, Rendering

TRANSPORT = "console"
#: The console is given its terminal by the bot (wiring), not built from a section;
#: whoever types there is named in [console] owner, never in [bot] owners.
NETWORK = Network(
    name=TRANSPORT,
    home=__name__,
    section="console",
    rendering=Rendering.PLAIN,
    sends_files=True,
    syntax_help=syntax_help,
)

_REACT = re.compile(r"^(?:\+1\s+(?P<n1>\d+)|(?P<sign>[+-])\s*(?P<n2>\d+))\s+(?P<key>\S+)$")
_REPLY = re.compile(r"^>\s*(?P<n>\d+)\s+(?P<text>.+)$", re.S)
_EDIT = re.compile(r"^\*\s*(?P<n>\d+)\s+(?P<text>.+)$", re.S)
# Lines that start like a reaction, reply or correction: when one is not a whole one,
# it is a typo to point out, not a message for the bot (which would take "+5" for an
# answer to the open question).
_LOOKS_LIKE = (
    ("react", re.compile(r"^[+-]\s*\d")),
    ("reply", re.compile(r"^>\s*\d")),
    ("edit", re.compile(r"^\*\s*\d")),
)
#: Keys typed as plain text, as chat clients send them: a digit picks that option.
_TYPED_KEYS = {"+1": "👍", "-1": "👎", **{str(n): f"{n}\ufe0f\u20e3" for n in range(1, 10)}}


@dataclass(frozen=True)
class ConsoleSettings:
    #: The fixed identity of whoever types at this terminal.
    owner: str = "owner"
    bot_name: str = "bot"
    #: The language of the console's own hints (`[bot] locale`).
    locale: str = "en"
    #: Where files the bot sends are written (a .patch, a log); None: kept in memory
    #: only (`Sent.file`), as in tests.
    files_dir: Path | None = None


@dataclass(frozen=True, slots=True)
class Malformed:
    """A line that looks like `kind` ("react", "reply", "edit") syntax but is not."""

    kind: str
    line: str


@dataclass(frozen=True, slots=True)
class Sent:
    """Something the bot sent, as a test sees it."""

    number: int
    text: str
    reply_to: str | None = None
    html: str | None = None
    #: For a reaction: the key, and `reply_to` names the message reacted to.
    reaction: str | None = None
    #: For an edit: the number of the message whose text this replaces.
    replaces: str | None = None
    #: For a file: what was sent.
    file: OutgoingFile | None = None


def _key(typed: str) -> str | None:
    """The reaction a typed key means; None for plain text that is no emoji ("yes", "10")."""
    if typed in _TYPED_KEYS:
        return _TYPED_KEYS[typed]
    return None if typed.isascii() else typed


def parse_line(
    line: str, *, owner: Identity, message_id: str, id_of: Callable[[str], str] = str
) -> IncomingEvent | Malformed | None:
    """Turn one typed line into an event; blank lines are nothing, a line that starts
    like a reaction, reply or correction but is not one is Malformed.

    `id_of` turns a typed message number into the id of that message.
    """
    text = line.strip()
    if not text:
        return None
    envelope = Envelope(
        chat=owner, sender=owner, message_id=message_id, is_direct=True, sender_name=owner.id
    )
    if m := _REACT.match(text):
        target = m.group("n1") or m.group("n2")
        key = _key(m.group("key"))
        if key is None:
            return Malformed("react", text)
        keys = frozenset({key})
        removed = m.group("sign") == "-"
        return IncomingReaction(
            envelope=envelope,
            target_id=id_of(target),
            added=frozenset() if removed else keys,
            removed=keys if removed else frozenset(),
        )
    if m := _REPLY.match(text):
        return IncomingMessage(
            envelope=envelope, text=m.group("text").strip(), reply_to=id_of(m.group("n"))
        )
    if m := _EDIT.match(text):
        return IncomingEdit(
            envelope=envelope, target_id=id_of(m.group("n")), text=m.group("text").strip()
        )
    for kind, pattern in _LOOKS_LIKE:
        if pattern.match(text):
            return Malformed(kind, text)
    return IncomingMessage(envelope=envelope, text=text)


class ConsoleTransport(Transport):
    name = TRANSPORT

    def __init__(
        self,
        settings: ConsoleSettings | None = None,
        *,
        input: TextIO | None = None,
        output: TextIO | None = None,
        handler: EventHandler | None = None,
        use_stdio: bool = False,
    ) -> None:
        super().__init__(handler=handler)
        self.settings = settings or ConsoleSettings()
        self.owner = Identity(TRANSPORT, self.settings.owner)
        self._input = sys.stdin if use_stdio and input is None else input
        self._output = sys.stdout if use_stdio and output is None else output
        self._said: asyncio.Queue[Sent] = asyncio.Queue()
        self._counter = 0
        self._session = uuid.uuid4().hex[:12]
        self._reader: asyncio.Task[None] | None = None
        #: Set when the input stream ends (the owner pressed Ctrl-D).
        self.closed = asyncio.Event()
        #: Awaited before each line read from the input stream: piped input waits for
        #: the bot to settle, as a person reads the answer before typing on (serve
        #: sets it; a terminal's lines come at a person's pace anyway).
        self.pace: Callable[[], Awaitable[None]] | None = None

    @property
    def interactive(self) -> bool:
        """Whether a person types the input (a terminal), not a pipe or a file."""
        try:
            return self._input is not None and self._input.isatty()
        except (AttributeError, ValueError):
            return False

    def note(self, line: str) -> None:
        """A line of the session itself, not a chat message: it gets no number."""
        self._write(line)

    def _next_number(self) -> int:
        self._counter += 1
        return self._counter

    def message_id(self, number: int | str) -> str:
        """The id behind message `number` of this session."""
        return f"{self._session}.{number}"

    def _number(self, message_id: str) -> str:
        """What the owner sees of an id: its number, if it is of this session."""
        prefix = f"{self._session}."
        return message_id.removeprefix(prefix) if message_id.startswith(prefix) else message_id

    def _write(self, line: str) -> None:
        if self._output is not None:
            self._output.write(line + "\n")
            self._output.flush()

    async def start(self) -> None:
        if self._input is not None:
            self._reader = asyncio.create_task(self._read(self._input), name="console-reader")
        await self._set_online(True)

    async def stop(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
        await self._set_online(False)

    async def _read(self, stream: TextIO) -> None:
        # A daemon thread, not asyncio.to_thread: a thread blocked on a
        # terminal's readline must not keep the process alive at exit.
        loop = asyncio.get_running_loop()
        lines: asyncio.Queue[str | None] = asyncio.Queue()

        def pump() -> None:
            for line in iter(stream.readline, ""):
                loop.call_soon_threadsafe(lines.put_nowait, line)
            loop.call_soon_threadsafe(lines.put_nowait, None)

        threading.Thread(target=pump, name="console-stdin", daemon=True).start()
        while (line := await lines.get()) is not None:
            if self.pace is not None and line.strip():
                await self.pace()
            await self.push(line)
        self.closed.set()

    async def push(self, line: str) -> IncomingEvent | None:
        """Feed one line as if the owner typed it; returns the event after the handler ran
        (None for a blank line, or a malformed one, which gets a hint and no number)."""
        if not line.strip():
            return None
        number = self._counter + 1
        event = parse_line(
            line, owner=self.owner, message_id=self.message_id(number), id_of=self.message_id
        )
        if isinstance(event, Malformed):
            self.note(hint(self.settings.locale, event.kind, event.line))
            return None
        self._next_number()
        if event is not None:
            # Echoed with its number even at a terminal: the owner needs the
            # number to reply to or react on the message later.
            self._write(f"[#{number}] {self.owner.id}: {line.strip()}")
            await self._emit(event)
        return event

    async def pop(self, within: float = 2.0) -> Sent:
        """The next thing the bot said (waits up to `within` seconds)."""
        return await asyncio.wait_for(self._said.get(), within)

    async def _send_text(self, message: Outgoing) -> str:
        # `mentions` go unwritten: the terminal is the one person's own screen.
        number = self._next_number()
        text, html = message.text, message.html
        if message.replaces is not None:
            # A terminal cannot change a printed line: it prints the new text, saying which.
            edited = self._number(message.replaces.message_id)
            self._write(f"[#{number}] (edit of #{edited}) {self.settings.bot_name}: {text}")
            self._said.put_nowait(Sent(number, text, html=html, replaces=edited))
            return self.message_id(number)
        shown = self._number(message.reply_to) if message.reply_to else None
        arrow = f" (re #{shown})" if shown else ""
        self._write(f"[#{number}]{arrow} {self.settings.bot_name}: {text}")
        self._said.put_nowait(Sent(number, text, reply_to=shown, html=html))
        return self.message_id(number)

    sends_files: ClassVar[bool] = True

    async def _send_file(self, message: Outgoing, file: OutgoingFile) -> str:
        """A terminal shows no file: it is written to `files_dir` and its path printed."""
        number = self._next_number()
        where = ""
        if self.settings.files_dir is not None:
            folder = self.settings.files_dir
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            # The name is the bot's own (a slug and a suffix); the number keeps each send.
            path = folder / f"{number}-{Path(file.name).name}"
            path.write_bytes(file.data)
            path.chmod(0o600)
            where = f" -> {path}"
        caption, reply_to = message.text, message.reply_to
        shown = self._number(reply_to) if reply_to else None
        arrow = f" (re #{shown})" if shown else ""
        head = f"{caption} " if caption else ""
        line = f"{head}📎 {file.name} ({len(file.data)} bytes){where}"
        self._write(f"[#{number}]{arrow} {self.settings.bot_name}: {line}")
        self._said.put_nowait(Sent(number, caption, reply_to=shown, file=file))
        return self.message_id(number)

    async def react(self, target: Target, message_id: str, key: str) -> str | None:
        number = self._next_number()
        shown = self._number(message_id)
        self._write(f"[#{number}] {self.settings.bot_name} reacted {key} to #{shown}")
        self._said.put_nowait(Sent(number, "", reply_to=shown, reaction=key))
        return self.message_id(number)
