"""The configuration reference of the documentation site is made from the config models
(chatbot/config/reference.py): every key of every section is in it, with what it is for."""

from __future__ import annotations

from chatbot.config import Config
from chatbot.config.reference import markdown, sections, undocumented
from tests.contracts.test_imports import ROOT

EXAMPLE = (ROOT / "chatbot" / "app" / "example.toml").read_text(encoding="utf-8")


def test_every_key_says_what_it_is_for() -> None:
    assert undocumented(Config, EXAMPLE) == []


def test_every_section_and_key_is_in_the_reference() -> None:
    page = markdown(Config, EXAMPLE)
    for title, model in sections(Config):
        assert f"## `[{title}]`" in page
        for name, info in model.model_fields.items():
            if not info.exclude:
                assert f"| `{name}` |" in page, f"{title}.{name}"
    # What a reader needs most, as the bot takes it.
    assert '| `sandbox` | "auto" \\| "bwrap" \\| "off" | "auto" |' in page
    assert "| `owners` | list of str | required |" in page


def test_a_key_without_a_word_is_found() -> None:
    from pydantic import BaseModel

    class Section(BaseModel):
        # Said above it.
        said: int = 1
        silent: int = 2

    class Root(BaseModel):
        extra: Section

    assert undocumented(Root, "") == ["extra.silent"]
