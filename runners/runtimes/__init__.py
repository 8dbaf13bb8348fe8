"""Runtime adapters: one module per agent CLI, pure argv builders and output parsers.

`run_model` ties an adapter to `runners.process`; everything else here is pure.
"""

from runners.runtimes.base import (
    InvalidRequest,
    Invocation,
    Mode,
    RunnerError,
    RunOutput,
    RunRequest,
    Usage,
    clean_detail,
)
from runners.runtimes.run import (
    ADAPTERS,
    Adapter,
    RunResult,
    SecretFileError,
    build_invocation,
    get_adapter,
    run_model,
)

__all__ = [
    "ADAPTERS",
    "Adapter",
    "InvalidRequest",
    "Invocation",
    "Mode",
    "RunOutput",
    "RunRequest",
    "RunResult",
    "RunnerError",
    "SecretFileError",
    "Usage",
    "build_invocation",
    "clean_detail",
    "get_adapter",
    "run_model",
]
