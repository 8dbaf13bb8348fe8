"""What an event asks for: the intake's first step sorts every event into one of these.

Each act names the access it needs (`authority.permits` decides); the intake then
dispatches it to its handler (chat/intake.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from chatbot.board import Posted, QuestionRow
from chatbot.chat.commands import Access, CommandCall, UsageProblem
from chatbot.chat.reactions import Reaction

# --- what an event asks for (step 1) -----------------------------------------


@dataclass(frozen=True)
class CommandAct:
    parsed: CommandCall | UsageProblem

    @property
    def access(self) -> Access:
        # A usage problem only shows a usage line, which anyone known may see.
        return self.parsed.command.access if isinstance(self.parsed, CommandCall) else Access.READ


@dataclass(frozen=True)
class AnswerAct:
    question: QuestionRow
    text: str | None = None
    option: int | None = None
    access: Access = Access.OWNER


@dataclass(frozen=True)
class DecideAct:
    request_id: int
    accept: bool
    access: Access = Access.OWNER


@dataclass(frozen=True)
class ReactAct:
    posted: Posted
    reaction: Reaction
    access: Access = Access.OWNER


@dataclass(frozen=True)
class SteerAct:
    """A reply to a run's status message: words for the running agent."""

    card_id: int
    text: str
    access: Access = Access.OWNER


@dataclass(frozen=True)
class ApprovalAct:
    """A reply to an agent's approval request: yes allows once, anything else denies
    with the words as the reason."""

    talk_id: int
    allow: bool
    reason: str
    access: Access = Access.OWNER


@dataclass(frozen=True)
class CommentAct:
    """A reply to one of /diff's file messages: a comment on the lines it quotes. A
    requester's becomes a request (the handler asks), so it passes as a look."""

    posted: Posted
    text: str
    quoted: str
    access: Access = Access.READ


@dataclass(frozen=True)
class VoiceAct:
    """A voice note: heard first (chat/voice.py), then taken as what was said."""

    access: Access = Access.READ


@dataclass(frozen=True)
class AttachAct:
    """A file sent as a reply to one of a card's messages: for that card."""

    slug: str
    access: Access = Access.REQUEST


@dataclass(frozen=True)
class LooseAct:
    """A file that names nothing (a direct chat): kept until a command says which card."""

    access: Access = Access.READ


#: Commands that take the files sent with them (or just before) themselves.
FILE_COMMANDS = frozenset({"attach", "steer", "draft", "answer"})


@dataclass(frozen=True)
class HintAct:
    """A plain direct message that is neither a command nor an answer."""

    open_questions: int
    access: Access = Access.READ


Act = (
    CommandAct
    | AnswerAct
    | DecideAct
    | ReactAct
    | SteerAct
    | ApprovalAct
    | CommentAct
    | VoiceAct
    | AttachAct
    | LooseAct
    | HintAct
)
