"""A run's latest step, read from the CLI's own event stream while it runs.

The CLIs print one JSON event per line as they work (codex `exec --json`; Claude
Code with `--output-format stream-json`). `StepReader` is fed stdout chunk by
chunk, splits complete lines, and asks the runtime what step a line shows (a
command run, a file changed, a tool used). It never decides anything about the
answer: the complete output is parsed, as strictly as ever, once the run ends.
"""

from __future__ import annotations

import json
from collections.abc import Callable

#: How much of a step is kept: a line on a phone, not the command's whole script.
STEP_CHARS = 120
#: A longer line (a command's whole output in one event) is skipped, not buffered:
#: a step is read from small events, and the run's output may be tens of MiB.
MAX_LINE_BYTES = 1024 * 1024

StepOf = Callable[[dict[str, object]], str | None]


class StepReader:
    def __init__(self, step_of: StepOf, on_step: Callable[[str], None]) -> None:
        self._step_of = step_of
        self._on_step = on_step
        self._pending = bytearray()
        self._skipping = False  # inside a line over MAX_LINE_BYTES, until its end
        self.latest: str | None = None
        self.steps = 0

    def feed(self, chunk: bytes) -> None:
        # Only the new chunk is searched for line ends, so a flood costs linear time.
        start = 0
        while (end := chunk.find(b"\n", start)) != -1:
            if not self._skipping:
                self._pending += chunk[start:end]
                self._line(bytes(self._pending))
            self._pending.clear()
            self._skipping = False
            start = end + 1
        if not self._skipping:
            self._pending += chunk[start:]
            if len(self._pending) > MAX_LINE_BYTES:
                self._pending.clear()
                self._skipping = True

    def _line(self, raw: bytes) -> None:
        try:
            event = json.loads(raw)
        except ValueError:
            return  # a damaged or non-JSON line is no step; the final parse judges it
        if not isinstance(event, dict):
            return
        step = self._step_of(event)
        if step:
            self.latest = shorten(step)
            self.steps += 1
            self._on_step(self.latest)


def shorten(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= STEP_CHARS else line[: STEP_CHARS - 1] + "…"
