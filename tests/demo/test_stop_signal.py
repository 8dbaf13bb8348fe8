"""`chatbot run` as a process: SIGTERM (what systemd sends) stops it cleanly, with exit
status 0 and no traceback in its log (SIGINT sets the same stop: startup.stop_on_signals)."""

from __future__ import annotations

import asyncio
import signal
import sys
from pathlib import Path


async def _serving(log: Path, process: asyncio.subprocess.Process, within: float) -> None:
    async with asyncio.timeout(within):
        while "serving on console" not in (log.read_text() if log.exists() else ""):
            if process.returncode is not None:
                raise AssertionError(f"the bot exited ({process.returncode}) before serving")
            # The log is a file of the bot's own; there is no event to await here.
            await asyncio.sleep(0.1)


async def test_sigterm_ends_the_bot_with_status_0(tmp_path: Path) -> None:
    # No --config: the embedded console demo, its state under ./var/console.
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "chatbot",
        "run",
        cwd=tmp_path,
        stdin=asyncio.subprocess.PIPE,  # kept open: the session does not end by itself
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    log = tmp_path / "var" / "console" / "bot.log"
    try:
        await _serving(log, process, 60)
        process.send_signal(signal.SIGTERM)
        stdout, stderr = await asyncio.wait_for(process.communicate(), 30)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    text = log.read_text()
    assert process.returncode == 0, (stderr.decode(), text[-2000:])
    assert "Traceback" not in text and "Traceback" not in stderr.decode()
    assert "failed; serving on without it" not in text
