"""ChatHandlers is made of facets it holds, not of mixins it inherits; a facet asks of it
only what HandlerHost declares.

Mixins once gave ChatHandlers 43 public methods, one of them (Lookups) holding the
constructor; a mixin that restated its host's members under TYPE_CHECKING kept copies of
signatures the checker never compared with the real ones (issue 39 point 3).
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

from chatbot.chat.handlers import ChatHandlers
from chatbot.chat.host import Facet
from chatbot.chat.replies import Replies

CHAT = Path(__file__).resolve().parents[2] / "chatbot" / "chat"
#: The issue's bound for one class's public methods.
MOST_PUBLIC_METHODS = 25


def handlers() -> ChatHandlers:
    board = object()  # nothing is carried out: only the shape is looked at
    return ChatHandlers(board, Replies(board, "en"))  # type: ignore[arg-type]


def facets(host: object) -> list[Facet]:
    return [value for value in vars(host).values() if isinstance(value, Facet)]


def chat_bases(cls: type) -> list[str]:
    """The classes of chatbot/chat that `cls` inherits from, Facet aside."""
    return [
        base.__name__
        for base in cls.__mro__[1:]
        if base.__module__.startswith("chatbot.chat.") and base is not Facet
    ]


def public_methods(cls: type) -> list[str]:
    return [
        name
        for name, member in inspect.getmembers(cls)
        if not name.startswith("_") and (callable(member) or isinstance(member, property))
    ]


def with_own_constructor(classes: list[type]) -> list[str]:
    return [cls.__name__ for cls in classes if "__init__" in vars(cls)]


def type_checking_blocks(source: str) -> int:
    return sum(
        1
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.If)
        and isinstance(node.test, ast.Name)
        and node.test.id == "TYPE_CHECKING"
    )


def test_chat_handlers_inherits_no_family_of_commands() -> None:
    assert chat_bases(ChatHandlers) == []


def test_each_facet_is_made_with_its_host_and_keeps_no_copy_of_its_state() -> None:
    host = handlers()
    held = facets(host)
    assert len(held) >= 8
    assert all(facet.host is host for facet in held)
    assert with_own_constructor([type(facet) for facet in held]) == []
    host.config = None
    host.locale = "de"
    assert all(facet.locale == "de" and facet.config is None for facet in held)


def test_no_class_of_the_handlers_has_more_public_methods_than_the_bound() -> None:
    classes = [ChatHandlers, *(type(facet) for facet in facets(handlers()))]
    counts = {cls.__name__: len(public_methods(cls)) for cls in classes}
    assert max(counts.values()) <= MOST_PUBLIC_METHODS, counts


def test_no_facet_restates_its_host_under_type_checking() -> None:
    modules = {type(facet).__module__.rsplit(".", 1)[1] for facet in facets(handlers())}
    restated = {
        name
        for name in modules
        if type_checking_blocks((CHAT / f"{name}.py").read_text(encoding="utf-8"))
    }
    assert restated == set()


def test_the_checks_catch_a_deliberate_violation() -> None:
    class Mixin:
        pass

    class Host(Mixin):
        pass

    Mixin.__module__ = "chatbot.chat.example"
    assert chat_bases(Host) == ["Mixin"]

    class Copying(Facet):
        def __init__(self, host: ChatHandlers) -> None:
            super().__init__(host)
            self.saved_locale = host.locale

    assert with_own_constructor([Copying]) == ["Copying"]

    class Wide:
        pass

    for n in range(MOST_PUBLIC_METHODS + 1):
        setattr(Wide, f"method_{n}", lambda self: None)
    assert len(public_methods(Wide)) == MOST_PUBLIC_METHODS + 1
    restating = "class Mixin:\n    if TYPE_CHECKING:\n        def act(self) -> None: ...\n"
    assert type_checking_blocks(restating) == 1
