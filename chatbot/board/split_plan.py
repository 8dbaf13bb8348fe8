"""An operator's split plan that waits for the owner (`confirm_splits`).

The plan is the children the split would create, kept in the card's data, so it
survives a restart and nothing exists before the owner approves it. Approval makes
exactly what the operator's split makes without confirmation.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chatbot.board.files import FileExistsRefusal, StagedFiles
from chatbot.board.tx import BoardError
from chatbot.store import Db
from chatbot.store import cards as card_store
from chatbot.store.card_data import PlannedChild
from chatbot.store.cards import Card


@dataclass(frozen=True)
class NewChild:
    slug: str
    title: str
    intent_path: str
    blocked_by: tuple[str, ...] = ()
    fields: dict[str, Any] = field(default_factory=dict)


class PlanNotMade(BoardError):
    """The approved plan cannot be made (a slug or intent file was taken meanwhile)."""


def dump(children: list[tuple[NewChild, str]]) -> list[PlannedChild]:
    return [
        {
            "slug": child.slug,
            "title": child.title,
            "intent_path": child.intent_path,
            "blocked_by": list(child.blocked_by),
            "fields": child.fields,
            "intent_markdown": markdown,
        }
        for child, markdown in children
    ]


def load(plan: list[PlannedChild]) -> list[tuple[NewChild, str]]:
    return [
        (
            NewChild(
                slug=entry["slug"],
                title=entry["title"],
                intent_path=entry["intent_path"],
                blocked_by=tuple(entry["blocked_by"]),
                fields=dict(entry["fields"]),
            ),
            entry["intent_markdown"],
        )
        for entry in plan
    ]


def stage(repo: Path, children: list[tuple[NewChild, str]], taken: set[str]) -> StagedFiles:
    """The children's intent files written aside, or PlanNotMade and nothing written."""
    files = StagedFiles(repo)
    try:
        for child, markdown in children:
            if child.slug in taken:
                raise PlanNotMade(f"a card '{child.slug}' exists already; nothing was created")
            files.add(child.intent_path, markdown, must_be_new=True)
    except FileExistsRefusal as refusal:
        files.discard()
        raise PlanNotMade(str(refusal)) from None
    except BaseException:
        files.discard()
        raise
    return files


async def make(
    db: Db,
    repo: Path,
    card: Card,
    create: Callable[[Db, Card, Sequence[NewChild]], Awaitable[None]],
) -> StagedFiles:
    """The approved plan's children (`create`, as an operator's split makes them) and
    their intent files, staged for the caller to place just before COMMIT."""
    children = load(card.data.split_plan)
    taken = {c.slug for c, _ in children if await card_store.get(db, c.slug) is not None}
    files = stage(repo, children, taken)
    try:
        await create(db, card, [child for child, _ in children])
    except BaseException:
        files.discard()
        raise
    return files
