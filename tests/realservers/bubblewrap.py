"""Debian's bubblewrap, the sandbox every agent run of the tests goes through (issue 32)."""

from __future__ import annotations

import os
import shutil
import subprocess


def ensure_installed() -> None:
    """Install the Debian package when `bwrap` is missing (root only)."""
    if shutil.which("bwrap"):
        return
    if os.geteuid() != 0:
        raise RuntimeError(
            "bubblewrap is not installed and this is not root: run "
            "`sudo apt-get update && sudo apt-get install -y bubblewrap` first"
        )
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(["apt-get", "update"], check=True, env=env)
    subprocess.run(
        ["apt-get", "install", "-y", "--no-install-recommends", "bubblewrap"], check=True, env=env
    )
    if not shutil.which("bwrap"):
        raise RuntimeError("apt-get install bubblewrap finished but `bwrap` is still not on PATH")
