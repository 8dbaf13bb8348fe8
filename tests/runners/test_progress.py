"""Steps read from a CLI's stream as it arrives: any chunking, floods skipped, not kept."""

from __future__ import annotations

import json

from runners.runtimes import codex
from runners.runtimes.progress import MAX_LINE_BYTES, STEP_CHARS, StepReader


def started(command: str) -> bytes:
    item = {"type": "command_execution", "command": command}
    return json.dumps({"type": "item.started", "item": item}).encode() + b"\n"


def reader() -> tuple[StepReader, list[str]]:
    seen: list[str] = []
    return StepReader(codex.step_of, seen.append), seen


def test_steps_split_across_chunks_are_read_once_whole() -> None:
    stream = started("pytest -q") + b"not json\n" + started("git diff --stat") + b'{"partial'
    for size in (1, 3, 7, len(stream)):
        steps, seen = reader()
        for at in range(0, len(stream), size):
            steps.feed(stream[at : at + size])
        assert seen == ["ran: pytest -q", "ran: git diff --stat"], size
        assert steps.latest == "ran: git diff --stat" and steps.steps == 2


def test_a_flood_in_one_line_is_skipped_without_being_kept() -> None:
    steps, seen = reader()
    chunk = b"x" * 65536
    for _ in range(8 * MAX_LINE_BYTES // len(chunk)):
        steps.feed(chunk)
        assert len(steps._pending) <= MAX_LINE_BYTES + len(chunk)
    steps.feed(b"\n" + started("make"))
    assert seen == ["ran: make"]


def test_a_long_command_is_one_short_line() -> None:
    steps, seen = reader()
    steps.feed(started("echo " + "word\n" * 100))
    assert len(seen[0]) == STEP_CHARS and seen[0].endswith("…") and "\n" not in seen[0]
