"""Split parents and their children: start children in dependency order, finish the parent.

Runs inside the board service's transaction after every change, so a child's
success, the start of the children it unblocks and the parent's completion
commit together.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from chatbot.domain.phases import Phase, child_success_phases
from chatbot.domain.transitions import Action, By
from chatbot.store import Db
from chatbot.store import cards as card_store
from chatbot.store.cards import Card

Moved = Callable[[Db, Card, Card, Action, str], Awaitable[None]]


async def progress(db: Db, card: Card, *, deploy_configured: bool, moved: Moved) -> None:
    """After `card` changed: start what it unblocked, complete its parent if all are done."""
    parent_id = card.parent_id if card.parent_id is not None else card.id
    parent = await card_store.get_by_id(db, parent_id)
    if parent is None or parent.phase is not Phase.SPLIT:
        return
    kids = await card_store.children(db, parent.id)
    if not kids:
        return
    done = child_success_phases(deploy_configured)
    done_slugs = {kid.slug for kid in kids if kid.phase in done}
    if len(done_slugs) == len(kids):
        after = await card_store.transition(
            db,
            parent.slug,
            Action.CHILDREN_DONE,
            actor="system",
            by=By.SYSTEM,
            reason=f"all {len(kids)} children succeeded",
        )
        await moved(db, parent, after, Action.CHILDREN_DONE, "")
        # A parent that is itself a child may complete its own parent in turn.
        await progress(db, after, deploy_configured=deploy_configured, moved=moved)
        return
    for kid in kids:
        if kid.phase is not Phase.PLANNED or not kid.data.auto_start:
            continue
        blockers = await card_store.blocked_by(db, kid.id)
        if all(slug in done_slugs for slug in blockers):
            reason = "dependencies done: " + ", ".join(blockers) if blockers else "no dependencies"
            after = await card_store.transition(
                db, kid.slug, Action.CHILD_STARTED, actor="system", by=By.SYSTEM, reason=reason
            )
            await moved(db, kid, after, Action.CHILD_STARTED, reason)
