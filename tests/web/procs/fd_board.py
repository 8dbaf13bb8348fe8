"""A web board over a real store in a process with few descriptors, for test_hostile.py.

    fd_board.py FOLDER SOFT_LIMIT HEADER_TIMEOUT_S

RLIMIT_NOFILE's soft limit is lowered before anything is opened; the board then serves
on a free port of 127.0.0.1 and logs to FOLDER/bot.log as the bot does. It prints
`serving PORT TOKEN`, then answers one line per command read from stdin:

- `probe`: what the bot does next to the board: import the intent files, read one,
  and hold 16 more files open at once -> `ok OPEN_DESCRIPTORS` or `error WHY`
- `hog`: open files until none is left, as a bot short of descriptors -> `hogged N`
- `refused`: wait until the board has said it could not accept a connection -> `refused`
- `free`: close them again -> `freed`
- `stop`: stop the board and the store, and exit
"""

from __future__ import annotations

import asyncio
import logging
import os
import resource
import sys
from pathlib import Path


def lower_limit(soft: int) -> None:
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def log_to(path: Path) -> None:
    # As chatbot's CLI: one file, INFO, aiohttp's libraries held at INFO.
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    logging.getLogger("aiohttp").setLevel(logging.INFO)


class Refusals(logging.Handler):
    """Sets `seen` once asyncio's accept() found no descriptor (as logged, filtered or not)."""

    def __init__(self) -> None:
        super().__init__()
        self.seen = asyncio.Event()

    def emit(self, record: logging.LogRecord) -> None:
        if record.name == "asyncio" and "accept" in record.getMessage():
            self.seen.set()


def say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


async def probe(site) -> str:
    held = []
    try:
        await site.board.import_cards()
        text = site.board.web.repo_text("docs/intent/plain-0.md", 10_000)
        if text is None or "Plain card 0" not in text[0]:
            return "error the intent file did not read back"
        intent = site.repo / "docs" / "intent" / "plain-0.md"
        held = [intent.open("rb") for _ in range(16)]
        return f"ok {len(os.listdir('/proc/self/fd'))}"
    except OSError as error:
        return f"error {error.strerror or error}"
    finally:
        for file in held:
            file.close()


def hog() -> list[int]:
    taken = []
    try:
        while True:
            taken.append(os.open(os.devnull, os.O_RDONLY))
    except OSError:
        return taken


async def main(folder: Path, soft: int, header_timeout_s: float) -> None:
    from tests.web.conftest import open_site

    log_to(folder / "bot.log")
    refusals = Refusals()
    logging.getLogger().addHandler(refusals)
    site = await open_site(folder, planned=1, header_timeout_s=header_timeout_s)
    say(f"serving {site.web.port} {site.token}")
    loop = asyncio.get_running_loop()
    taken: list[int] = []
    try:
        while True:
            command = (await loop.run_in_executor(None, sys.stdin.readline)).strip()
            if command == "probe":
                say(await probe(site))
            elif command == "hog":
                taken = hog()
                say(f"hogged {len(taken)}")
            elif command == "refused":
                await asyncio.wait_for(refusals.seen.wait(), 30)
                say("refused")
            elif command == "free":
                for fd in taken:
                    os.close(fd)
                taken = []
                say("freed")
            else:
                return
    finally:
        await site.web.stop()
        await site.store.close()


if __name__ == "__main__":
    lower_limit(int(sys.argv[2]))
    asyncio.run(main(Path(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])))
