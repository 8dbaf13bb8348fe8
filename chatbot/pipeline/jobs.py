"""A job's coroutine, found from its record in the job table (chatbot/domain/roles.py).

The table names each kind's coroutine as "module:function", so the domain imports
nothing of the pipeline; here every kind is looked up once, when a worker is made
(`resolve_all`): a name that does not lead to a coroutine function of the pipeline
stops the worker's start, not a job an hour later (arq's `Function` records, checked
when the worker is built).
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Awaitable, Callable
from functools import cache

from chatbot.domain.roles import JOBS
from chatbot.pipeline.context import JobContext

Handler = Callable[[JobContext], Awaitable[None]]


@cache
def handler_of(kind: str) -> Handler | None:
    """The coroutine that runs a job of `kind`; None for a kind the table does not know."""
    job = JOBS.get(kind)
    if job is None:
        return None
    module, _, name = job.runs.partition(":")
    if not module.startswith("chatbot.pipeline."):
        raise JobTableError(f"job kind {kind!r} runs {job.runs!r}: not a module of the pipeline")
    # getattr: the job table's own resolution, once per kind when a worker is made
    # (resolve_all): the domain's table cannot import the pipeline, so it names it.
    handler = getattr(importlib.import_module(module), name, None)
    if handler is None or not inspect.iscoroutinefunction(handler):
        raise JobTableError(f"job kind {kind!r} runs {job.runs!r}: no coroutine function there")
    found: Handler = handler
    return found


class JobTableError(RuntimeError):
    """The job table names a coroutine the pipeline does not have."""


def resolve_all() -> dict[str, Handler]:
    """Every job kind's coroutine, or JobTableError naming the first that has none."""
    resolved: dict[str, Handler] = {}
    for kind in JOBS:
        handler = handler_of(kind)
        assert handler is not None  # every kind of JOBS has a record
        resolved[kind] = handler
    return resolved
