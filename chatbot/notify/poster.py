"""What the notices' helpers (talk, agent questions, quota, run status, ...) need of the
notifier that owns them: its store, its language, its texts and its one way to post."""

from __future__ import annotations

from typing import Protocol

from chatbot.board import Card
from chatbot.store import Db, Store
from chatbot.store import chat as chat_store


class Poster(Protocol):
    store: Store
    locale: str

    def t(self, key: str, **values: object) -> str: ...

    async def post(
        self,
        db: Db,
        body: str,
        *,
        card: Card | None,
        purpose: str,
        question_id: int | None = None,
        mention_owners: bool = False,
        talk_id: int | None = None,
        attachment_id: int | None = None,
        proposal_id: int | None = None,
    ) -> list[tuple[int, chat_store.Post]]: ...
