"""MkDocs hook: the configuration reference page, made from the config models at build
time (chatbot/config/reference.py), so the site cannot describe keys the bot does not
take or miss ones it does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

MARKER = "<!-- config-reference -->"
EXAMPLE = Path(__file__).resolve().parents[1] / "chatbot" / "app" / "example.toml"


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    if MARKER not in markdown:
        return markdown
    from chatbot.config import Config
    from chatbot.config.reference import markdown as reference

    return markdown.replace(MARKER, reference(Config, EXAMPLE.read_text(encoding="utf-8")))
