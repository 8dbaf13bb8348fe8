"""The console session's log file, which must not turn a full disk into a flood.

The log usually lives on the same disk as the database. When that disk is full,
Python's `FileHandler` prints a "--- Logging error ---" block with a traceback to
standard error for every line it cannot write, which in the console is the chat
itself. This handler says it once (one line), drops what it cannot write, and says
how many lines were dropped once it can write again.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"  # logformat.TEXT; json replaces it


class LogFile(logging.FileHandler):
    def __init__(self, path: Path):
        super().__init__(path, encoding="utf-8")
        self.setFormatter(logging.Formatter(FORMAT))
        #: Lines dropped since writing the file last failed; None while it works.
        self.dropped: int | None = None

    def emit(self, record: logging.LogRecord) -> None:
        if self.dropped is not None:
            # Say first that lines went missing, in the file itself, once it takes them.
            note = logging.makeLogRecord(
                {
                    "name": __name__,
                    "levelno": logging.WARNING,
                    "levelname": "WARNING",
                    "msg": "%d log lines were dropped: the log file could not be written",
                    "args": (self.dropped,),
                }
            )
            if not self._write(note):
                self.dropped += 1
                return
            self.dropped = None
        if not self._write(record):
            self.dropped = 1 if self.dropped is None else self.dropped + 1

    def _write(self, record: logging.LogRecord) -> bool:
        try:
            super().emit(record)
            self.flush()
        except OSError as error:
            if self.dropped is None:
                print(
                    f"chatbot: cannot write the log file {self.baseFilename}: "
                    f"{error.strerror or error}; log lines are dropped until it can",
                    file=sys.stderr,
                )
            self._discard_buffer()
            return False
        return True

    def handleError(self, record: logging.LogRecord) -> None:  # noqa: N802 - logging's name
        # FileHandler.emit calls this on any error; OSError is ours to count (emit
        # re-raises it below), the rest is logging's usual report.
        error = sys.exc_info()[1]
        if isinstance(error, OSError):
            raise error
        super().handleError(record)

    def _discard_buffer(self) -> None:
        # What the failed write left in the text buffer would come out, garbled, later.
        stream = self.stream
        if stream is None:
            return
        try:
            stream.close()
        except OSError:
            pass
        self.stream = None  # FileHandler opens the file again on the next emit
