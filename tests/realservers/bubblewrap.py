"""Debian's bubblewrap, the sandbox every agent run of the tests goes through (issue 32)."""

from __future__ import annotations

import shutil

from . import apt


def ensure_installed() -> None:
    apt.install("bubblewrap", lambda: shutil.which("bwrap") is not None, "`bwrap` on PATH")
