"""The log's two formats: text for a person at a terminal, and JSON lines
(`[bot] log_format = "json"`) for journald and log shippers.

A JSON line is one object: time (UTC, ISO 8601), level, logger, message, and where
they apply the card's slug, the job's id, the role and the transport (from
`chatbot.log_context`, or the logger's name for a transport's own lines), and the
exception's traceback as one string.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from pathlib import Path

from chatbot import log_context
from chatbot.app.logfile import LogFile

TEXT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
FORMATS = ("text", "json")
_TRANSPORTS = "chatbot.transports."


class JsonLines(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        line.update(log_context.current())
        for field in log_context.FIELDS:
            # A call's own `extra={...}` says it more precisely than the context.
            if field in record.__dict__:
                line[field] = record.__dict__[field]
        if "transport" not in line and record.name.startswith(_TRANSPORTS):
            line["transport"] = record.name[len(_TRANSPORTS) :].split(".")[0]
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        elif record.exc_text:
            line["exception"] = record.exc_text
        if record.stack_info:
            line["stack"] = self.formatStack(record.stack_info)
        # Never one line per stanza of text: a message with newlines stays one JSON line.
        return json.dumps(line, ensure_ascii=False, default=str)


def formatter(kind: str) -> logging.Formatter:
    return JsonLines() if kind == "json" else logging.Formatter(TEXT)


def use(kind: str) -> None:
    """Every handler of the root logger writes `kind` from now on."""
    for handler in logging.getLogger().handlers:
        handler.setFormatter(formatter(kind))


#: Libraries whose DEBUG output would carry secrets (see `setup`).
NOISY_LOGGERS = ("slixmpp", "nio", "aiohttp", "aiosqlite", "psycopg")


def setup(*, verbose: bool) -> None:
    """Text to standard error until the configuration says otherwise (`use`)."""
    logging.basicConfig(level=logging.DEBUG if verbose else logging.INFO, format=TEXT)
    # The chat libraries log raw traffic at DEBUG: SASL exchanges and access tokens
    # included; the database drivers log statements with their parameters (a web
    # session's CSRF token, issue 33). Secrets are never logged, so they stay at INFO
    # even with -v.
    for noisy in NOISY_LOGGERS:
        logging.getLogger(noisy).setLevel(logging.INFO)


def to_file(path: Path) -> None:
    """The log goes to `path` instead (the console session: the terminal is the chat)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
    root.addHandler(LogFile(path))
