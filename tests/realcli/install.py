"""Install the pinned agent CLIs from the npm registry into .agent-clis/, once.

    python -m tests.realcli.install        (scripts/test runs this)

The versions come from the runtime registry (each record's `Cli`, gathered in
`runners.versions.TESTED`): a registered runtime's CLI is installed with no edit here.
Nothing is installed globally: the folder is project-local and git-ignored, and a
second run that finds every pinned version in place does nothing. Without npm it
installs Debian's `nodejs` and `npm` (root only), as scripts/test does for Prosody.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from runners.versions import TESTED, parse_version

ROOT = Path(__file__).resolve().parents[2]
CLI_DIR = ROOT / ".agent-clis"


def binary(runtime: str, folder: Path = CLI_DIR) -> Path:
    """Where an installed CLI program (`Cli.command`: codex, claude) is started from."""
    return folder / "node_modules" / ".bin" / runtime


def installed_version(package: str, folder: Path = CLI_DIR) -> str | None:
    try:
        manifest = json.loads((folder / "node_modules" / package / "package.json").read_text())
    except (OSError, ValueError):
        return None
    version = manifest.get("version")
    return version if isinstance(version, str) else None


def missing(folder: Path = CLI_DIR) -> list[str]:
    """`package@version` of every pinned CLI that is not installed at exactly that version."""
    wanted = []
    for runtime, (package, version) in TESTED.items():
        if installed_version(package, folder) != version or not os.access(
            binary(runtime, folder), os.X_OK
        ):
            wanted.append(f"{package}@{version}")
    return wanted


def _npm() -> str:
    npm = shutil.which("npm")
    if npm:
        return npm
    if os.geteuid() != 0:
        sys.exit("install: npm is missing; install Node.js and npm (apt-get install nodejs npm)")
    print("install: npm missing; installing Debian's nodejs and npm", file=sys.stderr)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
    subprocess.run(["apt-get", "install", "-y", "-qq", "nodejs", "npm"], check=True, env=env)
    npm = shutil.which("npm")
    if not npm:
        sys.exit("install: apt-get installed npm but it is not on PATH")
    return npm


def _version_of(runtime: str, folder: Path) -> str:
    done = subprocess.run(
        [str(binary(runtime, folder)), "--version"], capture_output=True, text=True, timeout=60
    )
    return (done.stdout + done.stderr).strip()


def install(folder: Path = CLI_DIR) -> list[str]:
    """Install what is missing; returns the `package@version` list it installed."""
    wanted = missing(folder)
    if not wanted:
        return []
    folder.mkdir(parents=True, exist_ok=True)
    manifest = {
        "private": True,
        "description": "agent CLIs for the tests; written by tests/realcli/install.py",
        "dependencies": {package: version for package, version in TESTED.values()},
    }
    (folder / "package.json").write_text(json.dumps(manifest, indent=2) + "\n")
    print(f"install: npm install {' '.join(wanted)} into {folder}", file=sys.stderr)
    subprocess.run(
        [_npm(), "install", "--no-audit", "--no-fund", "--loglevel=error"],
        cwd=folder,
        check=True,
    )
    still = missing(folder)
    if still:
        sys.exit(f"install: npm finished but these are not in place: {', '.join(still)}")
    return wanted


def main() -> int:
    install()
    for runtime, (package, version) in TESTED.items():
        said = _version_of(runtime, CLI_DIR)
        if parse_version(said) != parse_version(version):
            print(f"install: {package}: `{runtime} --version` says {said!r}", file=sys.stderr)
            return 1
    pins = ", ".join(f"{runtime} {version}" for runtime, (_, version) in TESTED.items())
    print(f"agent CLIs: {pins} in {CLI_DIR}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
