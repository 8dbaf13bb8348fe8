"""The command table meets its handlers in one place (chat/dispatch.py), checked at import."""

from __future__ import annotations

import dataclasses

import pytest

from chatbot.chat import dispatch
from chatbot.chat.commands import BY_NAME, COMMANDS
from chatbot.chat.handlers import ChatHandlers


def test_every_command_is_carried_out_by_a_method_of_the_handlers() -> None:
    for command in COMMANDS:
        handler = dispatch.HANDLERS[command.handler]
        assert getattr(ChatHandlers, handler.__name__) is handler


def test_a_command_naming_no_handler_is_refused_when_the_table_is_checked() -> None:
    broken = dataclasses.replace(BY_NAME["status"], handler="statuss")
    with pytest.raises(RuntimeError, match="do not exist: statuss"):
        dispatch.check((*COMMANDS, broken), dispatch.HANDLERS)


def test_a_handler_no_command_names_is_refused() -> None:
    extra = {**dispatch.HANDLERS, "forgotten": ChatHandlers.status}
    with pytest.raises(RuntimeError, match="no command names: forgotten"):
        dispatch.check(COMMANDS, extra)
