"""The board: the application core that chat, CLI and worker talk to.

`BoardService` moves cards (one transaction per move: the card, its event, the
job it queues, the question it asks, the files it writes and the notices it
produces land together or not at all), reads them (`reads`) and lets the worker
claim and finish jobs (`queue`). It knows nothing of XMPP, Matrix or the console,
and nothing outside this package talks SQL to the store but the app's start-up.
"""

from chatbot.board.attachments import (
    Attachment,
    AttachPurpose,
    FileGone,
    FileLimits,
    FileRefused,
)
from chatbot.board.budget import SpendReport, budget_stopped
from chatbot.board.change import Change
from chatbot.board.failures import OPERATOR_FAILED_QUESTION
from chatbot.board.file_kinds import FileKind
from chatbot.board.moves import Along, BoardError, BoardService, NewChild, closest_slugs
from chatbot.board.reads import BoardSummary, CardView
from chatbot.board.talk import (
    ApprovalDecided,
    NoRunToTalkTo,
    RunCannotTalk,
    TalkAdded,
)
from chatbot.board.tx import BoardTx

# The records the board hands out, so its users need nothing from the store.
from chatbot.store import StoreError, StoreUnwritable
from chatbot.store.card_data import (
    CardData,
    DataChanges,
    checks_record,
    inspection_record,
    review_record,
)
from chatbot.store.cards import Card, CardChanges, Event, UnknownCard
from chatbot.store.chat import Post, Posted, Request, RequestMessage
from chatbot.store.comments import LineComment
from chatbot.store.jobs import ActiveJobExists, Job, LeaseLost
from chatbot.store.questions import AlreadyAnswered, QuestionRow
from chatbot.store.spend import Spend
from chatbot.store.talk import TalkRow
from chatbot.store.telemetry import RunRecord

__all__ = [
    "Along",
    "OPERATOR_FAILED_QUESTION",
    "ActiveJobExists",
    "AlreadyAnswered",
    "ApprovalDecided",
    "AttachPurpose",
    "Attachment",
    "BoardError",
    "BoardService",
    "BoardSummary",
    "BoardTx",
    "Card",
    "CardChanges",
    "CardData",
    "CardView",
    "Change",
    "DataChanges",
    "Event",
    "FileGone",
    "FileKind",
    "FileLimits",
    "FileRefused",
    "Job",
    "LeaseLost",
    "LineComment",
    "NewChild",
    "NoRunToTalkTo",
    "Post",
    "Posted",
    "QuestionRow",
    "Request",
    "RequestMessage",
    "RunCannotTalk",
    "RunRecord",
    "TalkAdded",
    "StoreError",
    "StoreUnwritable",
    "Spend",
    "SpendReport",
    "TalkRow",
    "UnknownCard",
    "budget_stopped",
    "checks_record",
    "closest_slugs",
    "inspection_record",
    "review_record",
]
