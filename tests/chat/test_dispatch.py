"""The command table meets its handlers in one place (chat/dispatch.py), checked at import."""

from __future__ import annotations

import dataclasses

import pytest

from chatbot.chat import dispatch
from chatbot.chat.commands import BY_NAME, COMMANDS
from chatbot.chat.handlers import ChatHandlers
from chatbot.chat.host import Facet
from chatbot.chat.replies import Replies


def test_every_command_is_carried_out_by_a_method_of_the_handlers_or_a_facet() -> None:
    board = object()  # nothing is carried out: only the binding is looked at
    handlers = ChatHandlers(board, Replies(board, "en"))
    facets = [value for value in vars(handlers).values() if isinstance(value, Facet)]
    assert len(facets) >= 8
    for command in COMMANDS:
        bound = dispatch.HANDLERS[command.handler](handlers)
        assert bound.__name__ == command.handler
        owner = bound.__self__
        assert owner is handlers or owner in facets, command.name
        assert owner is handlers or owner.host is handlers


def test_a_command_naming_no_handler_is_refused_when_the_table_is_checked() -> None:
    broken = dataclasses.replace(BY_NAME["status"], handler="statuss")
    with pytest.raises(RuntimeError, match="do not exist: statuss"):
        dispatch.check((*COMMANDS, broken), dispatch.HANDLERS)


def test_a_handler_no_command_names_is_refused() -> None:
    extra = {**dispatch.HANDLERS, "forgotten": dispatch.HANDLERS["status"]}
    with pytest.raises(RuntimeError, match="no command names: forgotten"):
        dispatch.check(COMMANDS, extra)
