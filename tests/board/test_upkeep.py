from __future__ import annotations

import time

from chatbot.store import Store, kv, upkeep
from chatbot.store import chat as chat_store


async def test_old_bookkeeping_goes_recent_and_pending_rows_stay(store: Store) -> None:
    now = time.time()
    async with store.transaction() as db:
        await kv.mark_processed(db, "xmpp", "recent")
        await db.execute(
            "INSERT INTO processed_events (transport, event_id, at) VALUES ('xmpp', 'old', ?)",
            (now - 40 * 86400,),
        )
        for text in ("old sent", "old pending", "new sent"):
            await chat_store.enqueue(db, chat_store.Post("xmpp", "r@m", text))
        await db.execute(
            "UPDATE outbox SET state = 'sent', sent_at = ? WHERE text = 'old sent'",
            (now - 40 * 86400,),
        )
        await db.execute(
            "UPDATE outbox SET state = 'sent', sent_at = ? WHERE text = 'new sent'", (now,)
        )
        pruned = await upkeep.prune(db, now=now)
    assert (pruned.processed_events, pruned.sent_posts) == (1, 1)
    rows = await store.reader.fetchall("SELECT text FROM outbox ORDER BY id")
    assert [r[0] for r in rows] == ["old pending", "new sent"]
    async with store.transaction() as db:
        assert await kv.mark_processed(db, "xmpp", "recent") is False  # still known


async def test_given_up_posts_go_after_the_same_time(store: Store) -> None:
    now = time.time()
    async with store.transaction() as db:
        for text in ("old failed", "new failed"):
            row_id = await chat_store.enqueue(db, chat_store.Post("xmpp", "r@m", text))
            row = await chat_store.row(db, row_id)
            assert row is not None
            await chat_store.mark_failed(db, row, "TransportError: refused")
        await db.execute(
            "UPDATE outbox SET created_at = ? WHERE text = 'old failed'", (now - 40 * 86400,)
        )
        pruned = await upkeep.prune(db, now=now)
    assert pruned.sent_posts == 1
    assert await chat_store.failed(store.reader, since=now - 86400) == [
        ("xmpp", "r@m", 1, "TransportError: refused")
    ]
