"""The web board's bounded reads on both engines: pages from a cursor, the search by
slug and title (any case, wildcards taken literally), counts, and what changed."""

from __future__ import annotations

from chatbot.board import BoardService
from chatbot.board.card_lists import Cursor, like_pattern
from chatbot.domain.phases import Kind, Phase
from chatbot.domain.transitions import Action
from chatbot.store import Store
from chatbot.store import cards as card_store


async def made(store: Store, phase: Phase, titles: list[str], prefix: str) -> list[str]:
    slugs = []
    async with store.transaction() as db:
        for n, title in enumerate(titles):
            slug = f"{prefix}-{n:02d}"
            await card_store.create(db, slug, Kind.INTENT, phase, actor="test", title=title)
            slugs.append(slug)
    return slugs


def slugs(listing) -> list[str]:
    return [card.slug for card in listing.cards]


async def test_pages_of_several_phases_go_on_from_a_cursor(board: BoardService, store) -> None:
    deployed = await made(store, Phase.DEPLOYED, [f"Shipped {n}" for n in range(7)], "ship")
    done = await made(store, Phase.DONE, [f"Finished {n}" for n in range(5)], "fin")
    await made(store, Phase.PLANNED, ["Not done"], "plan")
    everything = (deployed + done)[::-1]  # newest first, across both phases
    phases = (Phase.DEPLOYED, Phase.DONE, Phase.RESEARCH_DONE)
    first = await board.web.card_list(phases, 5)
    assert slugs(first) == everything[:5] and first.newer is None
    second = await board.web.card_list(phases, 5, after=first.older)
    assert slugs(second) == everything[5:10] and second.newer is not None
    third = await board.web.card_list(phases, 5, after=second.older)
    assert slugs(third) == everything[10:] and third.older is None
    back = await board.web.card_list(phases, 5, before=third.newer)
    assert slugs(back) == slugs(second)
    back = await board.web.card_list(phases, 5, before=back.newer)
    assert slugs(back) == slugs(first) and back.newer is None
    assert (await board.web.phase_counts())[Phase.DEPLOYED] == 7
    # Every phase at once (one walk of cards_updated) pages the same way.
    every = await made(store, Phase.PLANNED, ["a", "b"], "more")
    first = await board.web.card_list(tuple(Phase), 10)
    assert slugs(first) == (every[::-1] + ["plan-00"] + everything)[:10]
    rest = await board.web.card_list(tuple(Phase), 10, after=first.older)
    assert slugs(rest) == everything[7:] and rest.older is None
    assert slugs(await board.web.card_list(tuple(Phase), 10, before=rest.newer)) == slugs(first)
    assert Cursor.parse(first.older.token()) == first.older


async def test_a_search_takes_its_text_literally_in_any_case(board: BoardService, store) -> None:
    titles = ["Reach 100% coverage", "Reach 100 users", "Rename a_b", "Rename AXB", "Back\\slash"]
    made_slugs = await made(store, Phase.DEPLOYED, titles, "t")
    phases = tuple(Phase)
    for text, expected in (
        ("100%", [made_slugs[0]]),
        ("%", [made_slugs[0]]),
        ("a_b", [made_slugs[2]]),
        ("_", [made_slugs[2]]),
        ("\\", [made_slugs[4]]),
        ("rename", [made_slugs[3], made_slugs[2]]),
        ("REACH 100", [made_slugs[1], made_slugs[0]]),
        ("t-03", [made_slugs[3]]),
    ):
        assert slugs(await board.web.card_list(phases, 10, text=text)) == expected, text
    assert like_pattern("50%_\\") == "%50\\%\\_\\\\%"


async def test_what_changed_since_a_mark_is_only_the_changed_cards(board: BoardService, store):
    planned = await made(store, Phase.PLANNED, ["One", "Two", "Three"], "p")
    mark = await board.web.change_mark()
    await board.act(planned[1], Action.ARCHIVE, actor="owner@localhost")
    assert [card.slug for card in await board.web.changed_cards(mark)] == [planned[1]]
    assert await board.web.changed_cards(await board.web.change_mark()) == []


async def test_the_waiting_cards_and_count_are_the_inboxs(board: BoardService, store) -> None:
    """ "Waiting for you" (board/waiting.py, in SQL) holds exactly the cards the inbox lists,
    its count is the inbox's, and the other lists leave those cards out."""
    from chatbot.board import inbox as board_inbox
    from tests.board.test_inbox_why import one_of_each

    await one_of_each(board)
    await made(store, Phase.PLANNING_WITH_FEEDBACK, ["Rejected"], "again")  # not listed
    retried = await made(store, Phase.FAILED, ["Retried"], "retried")
    async with store.transaction() as db:
        # A failed card with its run queued again: nothing waits for an owner there.
        card = await card_store.get(db, retried[0])
        from chatbot.store import jobs as job_store

        await job_store.enqueue(db, kind="builder", lane="light", card_id=card.id)
    items = await board_inbox.inbox(board)
    listed = {item.slug for item in items if item.slug}
    waiting = await board.web.card_list(tuple(Phase), 50, waits=True)
    assert slugs(waiting) and set(slugs(waiting)) == listed
    assert all(card.waits for card in waiting.cards)
    per_phase, count = await board.web.waiting_counts()
    assert count == len(items) == 10 and sum(per_phase.values()) == len(listed)
    others = await board.web.card_list(tuple(Phase)[:-1], 50, waits=False)
    assert not set(slugs(others)) & listed and not any(card.waits for card in others.cards)
    assert {"again-00", "retried-00"} <= set(slugs(others))
    everything = await board.web.card_list(tuple(Phase), 50)
    assert {card.slug for card in everything.cards if card.waits} == listed


async def test_the_board_page_reads_every_column_in_one_statement_as_card_list_does(
    board: BoardService, store
) -> None:
    """board_columns (one statement for the page) gives each column exactly the cards
    and the next page's cursor card_list gives it alone: a waiting card only in the
    waiting column, past the limit of a phase walked alone and of phases walked together."""
    from chatbot.board.board_columns import PILING_UP, Column
    from tests.board.test_inbox_why import one_of_each

    await one_of_each(board)
    await made(store, Phase.PLANNED, [f"Plan {n}" for n in range(4)], "plan")
    await made(store, Phase.PLANNING_WITH_FEEDBACK, ["Again"], "again")
    await made(store, Phase.BUILDING, ["Build 1", "Build 2", "Build 3"], "build")
    await made(store, Phase.FAILED, ["Failed"], "fail")
    await made(store, Phase.DEPLOYED, [f"Shipped {n}" for n in range(3)], "ship")
    await made(store, Phase.READY_FOR_DEPLOYMENT, ["Queued deploy"], "ready")
    working = tuple(p for p in Phase if p not in PILING_UP)
    page = [
        Column((Phase.PLANNED, Phase.PLANNING_WITH_FEEDBACK), 3),
        Column(working, 2),
        Column((), 4, waits=True),
        Column((), 50, waits=True),
        Column((Phase.REVIEWING,), 5),
        Column((Phase.READY_FOR_DEPLOYMENT,), 5),
        Column((Phase.DEPLOYED, Phase.DONE, Phase.RESEARCH_DONE), 2),
    ]
    found = await board.web.board_columns(page)
    for column, listing in zip(page, found, strict=True):
        if column.waits:
            alone = await board.web.card_list(tuple(Phase), column.limit, waits=True)
        else:
            alone = await board.web.card_list(column.phases, column.limit, waits=False)
        assert listing == alone, column
        assert all(card.waits is column.waits for card in listing.cards)
    # The limits were reached where there is more, so the cursors say where it goes on.
    assert found[0].older is not None and found[1].older is not None
    assert found[2].older is not None and found[3].older is None
    assert slugs(found[5]) == ["ready-00"]  # the approved card waiting for /deploy waits
    assert "approved" in slugs(found[3]) and "fail-00" in slugs(found[3])
