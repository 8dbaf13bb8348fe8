"""The board: the application core that chat, CLI and worker talk to.

`BoardService` moves cards (one transaction per move: the card, its event, the
job it queues, the question it asks, the files it writes and the notices it
produces land together or not at all), reads them (`reads`) and lets the worker
claim and finish jobs (`queue`). It knows nothing of XMPP, Matrix or the console,
and nothing outside this package talks SQL to the store but the app's start-up.
"""

from chatbot.board.moves import (
    OPERATOR_FAILED_QUESTION,
    BoardError,
    BoardService,
    Change,
    NewChild,
    closest_slugs,
)
from chatbot.board.reads import BoardSummary, CardView
from chatbot.store.cards import UnknownCard

__all__ = [
    "OPERATOR_FAILED_QUESTION",
    "BoardError",
    "BoardService",
    "BoardSummary",
    "CardView",
    "Change",
    "NewChild",
    "UnknownCard",
    "closest_slugs",
]
