"""Installing a Debian package the tests need, where it is missing (root only)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable


def install(package: str, present: Callable[[], bool], missing: str) -> None:
    """`apt-get install package` unless `present()`; `missing` names what is still not
    there afterwards (a command, a file) for the error."""
    if present():
        return
    if os.geteuid() != 0:
        raise RuntimeError(
            f"{package} is not installed and this is not root: run "
            f"`sudo apt-get update && sudo apt-get install -y {package}` first"
        )
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(["apt-get", "update"], check=True, env=env)
    subprocess.run(
        ["apt-get", "install", "-y", "--no-install-recommends", package], check=True, env=env
    )
    if not present():
        raise RuntimeError(f"apt-get install {package} finished but {missing} is still missing")
