"""Runtimes: one module per agent CLI, each exporting its `Runtime` record (registry.py
lists them); pure argv builders and output parsers.

`run_model` ties a runtime to `runners.process`; everything else here is pure.
"""

from runners.runtimes.base import (
    Cli,
    Grant,
    InvalidRequest,
    Invocation,
    KeyFile,
    Limited,
    Mode,
    RunnerError,
    RunOutput,
    RunRequest,
    Runtime,
    Usage,
    clean_detail,
)
from runners.runtimes.registry import RUNTIMES, get_runtime
from runners.runtimes.run import (
    KeyFileError,
    RunResult,
    build_invocation,
    run_model,
)
from runners.runtimes.talk import (
    ApprovalAsked,
    Conversation,
    Decision,
    Delivered,
    Refused,
    Steer,
    Taken,
    Talking,
    Told,
)

__all__ = [
    "RUNTIMES",
    "ApprovalAsked",
    "Conversation",
    "Decision",
    "Delivered",
    "Refused",
    "Steer",
    "Taken",
    "Talking",
    "Told",
    "Cli",
    "Grant",
    "InvalidRequest",
    "Invocation",
    "KeyFile",
    "Mode",
    "Limited",
    "RunOutput",
    "RunRequest",
    "RunResult",
    "RunnerError",
    "Runtime",
    "KeyFileError",
    "Usage",
    "build_invocation",
    "clean_detail",
    "get_runtime",
    "run_model",
]
