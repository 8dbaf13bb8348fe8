"""ChatHandlers holds its constructor; its mixins ask of it only what HandlerHost declares.

A mixin that held the constructor (as Lookups once did) hides where the handlers' state
is made; a mixin that restated its host's members under TYPE_CHECKING kept copies of
signatures the checker never compared with the real ones (issue 39 point 3).
"""

from __future__ import annotations

import ast
from pathlib import Path

from chatbot.chat.handlers import ChatHandlers
from chatbot.chat.host import HandlerHost

CHAT = Path(__file__).resolve().parents[2] / "chatbot" / "chat"


def mixins(cls: type) -> list[type]:
    """The classes of chatbot/chat that `cls` is made of, `cls` and the protocol aside."""
    return [
        base
        for base in cls.__mro__[1:]
        if base.__module__.startswith("chatbot.chat.") and base is not HandlerHost
    ]


def with_constructor(classes: list[type]) -> list[str]:
    return [cls.__name__ for cls in classes if "__init__" in vars(cls)]


def without_host(classes: list[type]) -> list[str]:
    return [cls.__name__ for cls in classes if HandlerHost not in cls.__mro__]


def type_checking_blocks(source: str) -> int:
    return sum(
        1
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.If)
        and isinstance(node.test, ast.Name)
        and node.test.id == "TYPE_CHECKING"
    )


def test_only_chat_handlers_has_a_constructor() -> None:
    assert "__init__" in vars(ChatHandlers)
    assert len(mixins(ChatHandlers)) >= 8
    assert with_constructor(mixins(ChatHandlers)) == []


def test_every_mixin_declares_its_host_as_the_protocol() -> None:
    assert without_host(mixins(ChatHandlers)) == []


def test_no_mixin_restates_its_host_under_type_checking() -> None:
    modules = {cls.__module__.rsplit(".", 1)[1] for cls in mixins(ChatHandlers)}
    restated = {
        name
        for name in modules
        if type_checking_blocks((CHAT / f"{name}.py").read_text(encoding="utf-8"))
    }
    assert restated == set()


def test_the_checks_catch_a_deliberate_violation() -> None:
    class Holder(HandlerHost):
        def __init__(self) -> None:
            self.locale = "en"

    class Host(Holder):
        pass

    Holder.__module__ = Host.__module__ = "chatbot.chat.example"
    assert with_constructor(mixins(Host)) == ["Holder"]

    class Plain:
        pass

    class Other(Plain):
        pass

    Plain.__module__ = "chatbot.chat.example"
    assert without_host(mixins(Other)) == ["Plain"]
    restating = "class Mixin:\n    if TYPE_CHECKING:\n        def act(self) -> None: ...\n"
    assert type_checking_blocks(restating) == 1
