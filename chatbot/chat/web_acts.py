"""An action from the web board's page, run as the chat runs the same command.

The page sends what a signed-in owner pressed (the card, the action, an answer's
option or words). It becomes the chat command's invocation and goes through the
same table, the same authority rule (checked again now, from the configuration as
it is now: an owner removed since sign-in acts no more) and the same handler, so the
board call, its refusals and their ways forward are chat's own. What the handler
would have answered in chat is given back to the page instead of posted as a reply,
and the card's history names the actor "<identity> via web". What changed something
is also said in the card's rooms ("🌐 <identity> via web: ..."), in the move's own
transaction (board/tx.py): a refused action says nothing there.
A new draft (`/draft <text>`, from the board page's "New card" form) is one too.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from chatbot.board import Post, StoreUnwritable, UnknownCard
from chatbot.board.comments import NewComment
from chatbot.board.tx import ON_PAGE
from chatbot.board.web_sessions import Said
from chatbot.chat import commands, dispatch, render
from chatbot.chat.authority import Standing
from chatbot.chat.commands import UsageProblem
from chatbot.chat.handlers import ChatHandlers
from chatbot.chat.intake import ChatIntake
from chatbot.chat.replies import Origin, Replies
from chatbot.domain.checks import SKIP_FLAG, deploy_held
from chatbot.domain.phases import Phase
from chatbot.transports.base import Envelope, Identity, IncomingEvent, IncomingMessage
from chatbot.transports.networks import normal

log = logging.getLogger(__name__)

# What the page may ask for, each written as the chat command it is.
ON_CARD = frozenset({"start", "confirm", "retry", "fix", "cancel", "archive", "deploy", "approve"})
WITH_TEXT = frozenset({"answer", "steer", "deny"})
ON_REQUEST = frozenset({"accept", "decline"})
# Not on a card: a new one. There is no command that makes a planned card from words;
# /draft starts the planner's dialogue that ends in one.
NEW = frozenset({"draft"})
ACTIONS = ON_CARD | WITH_TEXT | ON_REQUEST | {"comment"} | NEW
# The page's own choice past the repository's checks (its `checks` field), once: as
# `/retry <slug> --skip-checks` and `/deploy <slug> --skip-checks` in chat.
SKIPPABLE = frozenset({"retry", "deploy"})
_ids = itertools.count(1)


@dataclass(frozen=True)
class PageOrigin(Origin):
    @property
    def actor(self) -> str:
        return f"{self.identity} via web"


class PageReplies(Replies):
    """Replies that stay on the page. An answer written inside a move's transaction is
    kept only if no refusal follows: a refusal means that transaction was undone."""

    #: How the rooms hear what was done: "🌐 <who> via web: <answer>".
    said_key = "web_said"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.moved: list[Said] = []
        self.said: list[Said] = []

    def post(self, event: IncomingEvent, text: str, **links: Any) -> Post:
        """The answer for the page; what the transaction is given (and the rooms hear,
        board/tx.py) is that answer said as done from the web by its owner."""
        made = super().post(event, text, **links)
        self.moved.append((made.text, links.get("purpose") == "refusal"))
        who = (
            event.envelope.sender.id
            if event.envelope.sender is not None
            else event.envelope.chat.id
        )
        room = self.text(self.said_key, who=who, text=made.text)
        return replace(made, text=room, html=None, reply_to=None)

    async def send(self, event: IncomingEvent, text: str, **links: Any) -> None:
        refused = links.get("purpose") == "refusal"
        if refused:
            self.moved.clear()
        shown = commands.shown_with(text, self.prefix)
        self.said.append((render.clip(shown, self.locale), refused))

    def everything(self) -> list[Said]:
        return [*self.moved, *self.said]


def _comment(fields: Mapping[str, str], text: str) -> NewComment:
    """The page's comment form: the file, its lines (none: the whole file), the commit
    the page showed (the board refuses it if the card has moved on)."""
    start, end = fields.get("start", "").strip(), fields.get("end", "").strip()
    lines = None
    if start.isdigit():
        lines = (int(start), int(end) if end.isdigit() else int(start))
    return NewComment(fields.get("path", ""), lines, text, commit=fields.get("commit") or None)


def _identity(text: str) -> Identity | None:
    transport, _, who = text.partition(":")
    return normal(Identity(transport, who)) if transport and who else None


class WebActs:
    def __init__(self, intake: ChatIntake):
        self.intake = intake

    async def __call__(
        self, identity: str, slug: str, action: str, fields: Mapping[str, str]
    ) -> list[Said]:
        """Run the action as `identity`; what chat would have answered."""
        intake = self.intake
        replies = PageReplies(intake.board, intake.locale, prefix=intake.prefixes[0])
        handlers = ChatHandlers(intake.board, replies, intake.handlers.config)
        who = _identity(identity)
        event = IncomingMessage(
            envelope=Envelope(
                chat=Identity(ON_PAGE, identity),
                sender=who,
                message_id=f"web-{next(_ids)}",
                is_direct=True,
            ),
            text=f"/{action}",
        )
        role = intake.authority.role(who)
        origin = PageOrigin(event, who or Identity(ON_PAGE, identity), role)
        try:
            if role is not Standing.OWNER:
                await replies.say(event, "web_owners_only", purpose="refusal")
            elif action not in ACTIONS:
                await replies.say(event, "web_unknown_action", action=action, purpose="refusal")
            else:
                await act_as_chat(intake, handlers, origin, slug, action, fields)
        except StoreUnwritable as error:
            await replies.say(event, "store_unwritable", reason=str(error), purpose="refusal")
        except Exception:
            log.exception("web action %s on %s by %s failed", action, slug, identity)
            await replies.say(event, "internal_error", purpose="refusal")
        return replies.everything()


async def _held_by_checks(handlers: ChatHandlers, origin: Origin, slug: str) -> bool:
    """A deploy the checks hold (as /deploy refuses it), refused naming the page's own
    choice past them; True when it was."""
    try:
        card = await handlers.board.reads.card(slug)
    except UnknownCard:
        return False  # the command's own answer says so
    if card.phase is not Phase.READY_FOR_DEPLOYMENT:
        return False  # refused for its phase, with its ways
    why = deploy_held(card.data.checks, card.commit_hash)
    if why is None:
        return False
    commit = (card.commit_hash or "")[:12]
    await handlers.replies.say(
        origin.event, "web_deploy_checks", slug=slug, commit=commit, why=why, purpose="refusal"
    )
    return True


async def act_as_chat(
    intake: ChatIntake,
    handlers: ChatHandlers,
    origin: Origin,
    slug: str,
    action: str,
    fields: Mapping[str, str],
) -> None:
    """`action` on `slug` as its chat command, through `handlers` (whose replies say
    where the answers go), as `origin`, an owner authority has checked already."""
    text = fields.get("text", "").strip()
    option = fields.get("option", "")
    question = None
    if action == "answer":
        try:
            view = await intake.board.reads.view(slug)
        except UnknownCard:
            await handlers.replies.unknown_card(origin.event, slug)
            return
        question = view.open_question
        asked = fields.get("question", "")
        if asked.isdigit():
            # The inbox's button of one question (a working agent may have a few open).
            named = await intake.board.reads.question(int(asked))
            if named is not None and named.card_id == view.card.id:
                question = named
    if action == "answer" and option.isdigit():
        if question is None:
            await handlers.replies.say(origin.event, "no_open_question", slug=slug)
            return
        await handlers.answer_question(origin, question, text=None, option=int(option))
        return
    if action == "comment":
        await handlers.commenting.comment_at(origin, slug, _comment(fields, text))
        return
    skip = action in SKIPPABLE and fields.get("checks") == SKIP_FLAG
    if action == "deploy" and not skip and await _held_by_checks(handlers, origin, slug):
        return
    if action in NEW:
        line = f"/{action} {text}"
    elif action in ON_REQUEST:
        line = f"/{action} {fields.get('request', '')}"
    elif action in WITH_TEXT:
        line = f"/{action} {slug} {text}"
    else:
        line = f"/{action} {slug}" + (f" {SKIP_FLAG}" if skip else "")
    parsed = commands.parse(line, (commands.PREFIX,))
    if isinstance(parsed, UsageProblem):
        usage = render.usage_problem(parsed, intake.locale)
        await handlers.replies.send(origin.event, usage, purpose="refusal")
        return
    if question is not None:
        # As a reply to the question's message: "yes" approves a split plan.
        answer = parsed.text("text")
        await handlers.answer_question(origin, question, text=answer, option=None)
        return
    if action in NEW:
        # Its questions go where the card's notices go: the page is no chat.
        await handlers.draft(origin, parsed, chat={})
        return
    await dispatch.carry_out(handlers, origin, parsed)
