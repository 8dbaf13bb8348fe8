"""A job's coroutine, found from its record in the job table (chatbot/domain/roles.py).

The table names each kind's coroutine as "module:function", so the domain imports
nothing of the pipeline; here it is looked up once per kind. A name that does not
lead to a coroutine of the pipeline fails a test (tests/pipeline/test_jobs_table.py),
not a job.
"""

from __future__ import annotations

import importlib
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
    handler: Handler = getattr(importlib.import_module(module), name)
    return handler
