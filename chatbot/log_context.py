"""What a log line is about: the card, job, role and transport in whose handling it was
written, for the structured log (`[bot] log_format = "json"`).

Kept in a context variable, so every line written while a job runs or a chat event is
handled carries them, also the lines of the libraries and runners it calls, without
passing them down. asyncio gives each task a copy of its creator's context: what a
job's task adds stays with that job.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from types import MappingProxyType

FIELDS = ("card", "job", "role", "transport")

_about: ContextVar[Mapping[str, object]] = ContextVar("log_about", default=MappingProxyType({}))


def current() -> Mapping[str, object]:
    return _about.get()


def name_task(**fields: object) -> None:
    """Name what the current task is about from now on (a job's own task)."""
    _about.set({**_about.get(), **{k: v for k, v in fields.items() if v is not None}})


@contextlib.contextmanager
def about(**fields: object) -> Iterator[None]:
    """Name what the lines written inside the block are about."""
    token = _about.set({**_about.get(), **{k: v for k, v in fields.items() if v is not None}})
    try:
        yield
    finally:
        _about.reset(token)
