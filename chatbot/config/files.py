"""[files]: what the bot keeps of the files people send, and where.

Every key has a default, so the section may be left out: files are then kept in
`files` beside the SQLite file (with PostgreSQL, beside the workspaces), which is
where the bot keeps its other state.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, model_validator

from chatbot.config.base import Section
from chatbot.config_file import KeyProblem


class FilesSection(Section):
    # One file larger than this is refused; chat networks stop its download here.
    max_size_mb: int = Field(default=20, ge=1, le=1024)
    # All kept files together; past it the files of finished cards go first, oldest first.
    quota_mb: int = Field(default=1024, ge=1, le=1_048_576)
    # A picture whose header says more pixels than this is refused before it is decoded.
    max_pixels: int = Field(default=50_000_000, ge=10_000, le=1_000_000_000)
    # Where files are kept (mode 0700); unset: `files` in the bot's state folder.
    folder: Path | None = None
    # How long a file sent without naming its card waits for /attach (or a steer, a draft).
    keep_loose_minutes: int = Field(default=30, ge=1, le=7 * 24 * 60)

    @model_validator(mode="after")
    def _one_file_fits(self) -> FilesSection:
        if self.max_size_mb > self.quota_mb:
            raise KeyProblem(
                "files.max_size_mb", "is larger than files.quota_mb: no such file could be kept"
            )
        return self

    @property
    def max_bytes(self) -> int:
        return self.max_size_mb * 1024 * 1024

    @property
    def quota_bytes(self) -> int:
        return self.quota_mb * 1024 * 1024
