"""A real process that changes the board until it is killed (used by the crash tests).

mode "hold": make one transition inside a transaction, say MID, then wait forever
before committing. mode "loop": transition back and forth, saying each commit.
"""

from __future__ import annotations

import asyncio
import sys

from chatbot.domain.phases import Phase
from chatbot.domain.transitions import Action, By
from chatbot.store import Store
from chatbot.store import cards as card_store
from chatbot.store import jobs as job_store


async def hold(path: str, slug: str) -> None:
    store = await Store.open(path)
    async with store.transaction() as db:
        card = await card_store.transition(db, slug, Action.START, actor="owner", by=By.OWNER)
        await job_store.enqueue(db, kind="operator", lane="role:operator", card_id=card.id)
        print("MID", flush=True)
        await asyncio.get_running_loop().create_future()  # never commits


async def loop(path: str, slug: str) -> None:
    store = await Store.open(path)
    count = 0
    while True:
        async with store.transaction() as db:
            card = await card_store.require(db, slug)
            action = Action.START if card.phase is Phase.PLANNED else Action.CANCEL
            await card_store.transition(db, slug, action, actor="owner", by=By.OWNER)
        count += 1
        print(f"COMMITTED {count}", flush=True)


if __name__ == "__main__":
    mode, path, slug = sys.argv[1:4]
    asyncio.run(hold(path, slug) if mode == "hold" else loop(path, slug))
