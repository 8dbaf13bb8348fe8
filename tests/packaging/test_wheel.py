"""The wheel works anywhere: built from this tree, installed into a fresh venv in a
folder far from it, and the README's console session run from the installed bot.

Before the prompt templates and the demo were package data, an installed wheel
failed every run ("no template roles/operator.md").
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str | Path, cwd: Path | None = None, timeout: float = 600) -> str:
    done = subprocess.run(
        [str(a) for a in args], capture_output=True, text=True, cwd=cwd, timeout=timeout
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


async def expect(stdout: asyncio.StreamReader, pattern: str, seen: list[str]) -> str:
    regex = re.compile(pattern)
    async with asyncio.timeout(60):
        while True:
            line = (await stdout.readline()).decode()
            assert line, "the bot ended before saying: " + pattern + "\n" + "".join(seen)
            seen.append(line)
            if regex.search(line):
                return line


def _name(requirement: str) -> str:
    """The distribution a requirement names, normalised (PEP 503)."""
    return re.sub(r"[-_.]+", "-", re.split(r"[\s\[<>=!~;]", requirement, maxsplit=1)[0]).lower()


def clean_copy(target: Path) -> Path:
    """The files git knows of (or would: not ignored), without build leftovers such as
    an editable install's egg-info, which would smuggle in files the wheel lacks."""
    listed = run("git", "-C", ROOT, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            if source.is_symlink():
                (target / name).symlink_to(os.readlink(source))
            else:
                shutil.copy2(source, target / name)
    return target


async def test_the_installed_wheel_runs_the_console_demo(tmp_path: Path) -> None:
    dist, venv, work = tmp_path / "dist", tmp_path / "venv", tmp_path / "work"
    source = clean_copy(tmp_path / "source")
    run(sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", dist, source)
    [wheel] = dist.glob("intent_board_chatbot-*.whl")
    # It asks for exactly the project's dependencies...
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    with zipfile.ZipFile(wheel) as archive:
        [metadata] = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        wanted = archive.read(metadata).decode()
    requires = [
        line.removeprefix("Requires-Dist: ")
        for line in wanted.splitlines()
        if line.startswith("Requires-Dist: ") and "extra ==" not in line
    ]
    assert sorted(map(_name, requires)) == sorted(map(_name, project["dependencies"]))
    # ...and is installed alone into a new venv that sees this venv's packages for
    # them (resolving and installing 40 of them again from pip's cache was 20 CPU s of
    # a 39 s test; pip's resolver is pip's to test). Only the wheel brings `chatbot`:
    # a path in a .pth file is not searched for .pth files, so this venv's editable
    # finder for the source tree stays out.
    run(sys.executable, "-m", "venv", "--without-pip", venv)
    [site] = (venv / "lib").glob("python3.*/site-packages")
    [ours] = [Path(p) for p in sys.path if p.endswith("site-packages") and sys.prefix in p]
    (site / "dependencies.pth").write_text(f"{ours}\n")
    run(
        *(sys.executable, "-m", "pip", "--python", venv / "bin" / "python"),
        *("install", "-q", "--no-deps", "--no-index", wheel),
    )
    work.mkdir()
    # It is the installed package that runs, not this source tree.
    where = run(venv / "bin" / "python", "-c", "import chatbot; print(chatbot.__file__)", cwd=work)
    assert str(venv) in where and str(ROOT) not in where
    assert run(venv / "bin" / "chatbot", "--version", cwd=work).startswith("chatbot 0.")

    env = {k: v for k, v in os.environ.items() if k not in ("CHATBOT_CONFIG", "PYTHONPATH")}
    bot = await asyncio.create_subprocess_exec(
        venv / "bin" / "chatbot",
        "run",
        cwd=work,
        env=env,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    assert bot.stdin is not None and bot.stdout is not None
    seen: list[str] = []
    try:
        await expect(bot.stdout, r"intent board console", seen)
        bot.stdin.write(b"/draft greet people in the demo service\n")
        question = await expect(bot.stdout, r"Who is this for", seen)
        number = re.match(r"\[#(\d+)\]", question).group(1)
        bot.stdin.write(f"+{number} 2️⃣\n".encode())
        await expect(bot.stdout, r"greet-people-in-the-demo-service: new planned card", seen)
        bot.stdin.write(b"/start greet-people-in-the-demo-service\n")
        await expect(bot.stdout, r"review approve", seen)
        bot.stdin.close()  # Ctrl-D ends the session
        assert await asyncio.wait_for(bot.wait(), 30) == 0
    finally:
        if bot.returncode is None:
            bot.kill()
            await bot.wait()
    # Its state is where the README says, under the folder it was started in.
    assert (work / "var" / "console" / "board.sqlite3").is_file()
    assert (
        work
        / "var"
        / "console"
        / "demo-repo"
        / "docs"
        / "intent"
        / "greet-people-in-the-demo-service.md"
    ).is_file()
    assert not any("Traceback" in line or "PromptError" in line for line in seen), "".join(seen)


def test_the_license_is_an_spdx_expression() -> None:
    # A table (`license = { text = ... }`) is deprecated and made every build warn.
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "MIT"
