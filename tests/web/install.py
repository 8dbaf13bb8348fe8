"""Make Debian's chromium and chromedriver present for the web board tests, once.

    python -m tests.web.install        (scripts/test runs this)

Like Prosody: installed with apt-get when missing (root only); otherwise it says
what to run. The browser tests use exactly these two binaries and never download one.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
PACKAGES = ("chromium", "chromium-driver")


def missing() -> list[str]:
    return [path for path in (CHROMIUM, CHROMEDRIVER) if not os.access(path, os.X_OK)]


def ensure_installed() -> None:
    if not missing():
        return
    if os.geteuid() != 0:
        raise RuntimeError(
            f"{', '.join(missing())} missing and this is not root: run "
            f"`sudo apt-get update && sudo apt-get install -y {' '.join(PACKAGES)}` first"
        )
    print(
        f"install: {', '.join(missing())} missing; installing Debian's {' '.join(PACKAGES)}",
        file=sys.stderr,
    )
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
    subprocess.run(
        ["apt-get", "install", "-y", "-qq", "--no-install-recommends", *PACKAGES],
        check=True,
        env=env,
    )
    if missing():
        raise RuntimeError(f"apt-get install finished but {', '.join(missing())} is still missing")


def main() -> int:
    try:
        ensure_installed()
    except RuntimeError as error:
        print(f"install: {error}", file=sys.stderr)
        return 1
    version = subprocess.run([CHROMIUM, "--version"], capture_output=True, text=True).stdout
    print(
        f"browser: {version.strip()} and {shutil.which('chromedriver') or CHROMEDRIVER}",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
