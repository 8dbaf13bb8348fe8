"""The shell's reads of the board: `chatbot cards`, `card`, `inbox` and `why`, in chat's
words or as JSON."""

from __future__ import annotations

import json
import sys

from chatbot.app.views import JSON_SCHEMA_VERSION, inbox_json, view_json, why_json
from chatbot.board import BoardService, UnknownCard, closest_slugs
from chatbot.board import inbox as board_inbox
from chatbot.chat import render, render_inbox
from chatbot.chat.commands import shown_with

EXIT_OK = 0
EXIT_FAILURE = 1


async def unknown(board: BoardService, slug: str) -> int:
    hints = closest_slugs(slug, await board.reads.slugs())
    hint = f"; did you mean {', '.join(hints)}?" if hints else ""
    print(f"no card '{slug}'{hint}", file=sys.stderr)
    return EXIT_FAILURE


async def inbox_command(board: BoardService, as_json: bool, locale: str, prefix: str) -> int:
    items = await board_inbox.inbox(board)
    if as_json:
        print(json.dumps(inbox_json(items), indent=2))
    else:
        print(shown_with(render_inbox.inbox(items, locale), prefix))
    return EXIT_OK


async def why_command(
    board: BoardService, slug: str, as_json: bool, locale: str, prefix: str
) -> int:
    try:
        found = await board_inbox.why(board, slug)
    except UnknownCard:
        return await unknown(board, slug)
    sentence = shown_with(render_inbox.why(found, locale), prefix)
    print(json.dumps(why_json(found, sentence), indent=2) if as_json else sentence)
    return EXIT_OK


async def cards_command(board: BoardService, as_json: bool, locale: str, prefix: str) -> int:
    if as_json:
        views = await board.reads.all_views()
        cards = [view_json(v, locale, prefix) for v in views]
        document = {"schema_version": JSON_SCHEMA_VERSION, "cards": cards}
        print(json.dumps(document, indent=2))
    else:
        print(await board_text(board, locale))
    return EXIT_OK


async def board_text(board: BoardService, locale: str) -> str:
    """What /status says in chat, with every card named."""
    questions = []
    for question in await board.reads.open_questions():
        card = await board.reads.card_by_id(question.card_id)
        questions.append((card.slug if card else "-", question))
    return render.board(
        await board.reads.summary(with_slugs=True),
        questions,
        await board.reads.pending_requests(),
        await board.reads.job_slugs(),
        locale,
        slugs_per_phase=None,
    )


async def card_command(
    board: BoardService, slug: str, as_json: bool, locale: str, prefix: str
) -> int:
    try:
        view = await board.reads.view(slug)
    except UnknownCard:
        return await unknown(board, slug)
    if as_json:
        print(json.dumps(view_json(view, locale, prefix), indent=2))
        return EXIT_OK
    # What /status and /log say in chat, together and uncut.
    runs = await board.reads.runs_of(view.card.id, limit=10)
    text = render.card(view, runs, locale) + "\n" + render.history(view, locale)
    print(shown_with(text, prefix))
    return EXIT_OK
