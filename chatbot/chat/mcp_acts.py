"""An action from the owner's own assistant over MCP (`chatbot mcp --as ID`), run as the
chat runs the same command.

It is the web board's way (chat/web_acts.py) with another channel: the tool's call
becomes the chat command's invocation and goes through the same table, the same
authority rule (asked again at every call) and the same handler, so the refusals and
their ways forward are chat's own. What the handler would have answered in chat is the
tool's result; the card's history names the actor "<identity> via mcp", and what
changed something is said in the card's rooms ("🤖 <identity> via mcp: ...") in the
move's own transaction (board/tx.py: ON_MCP).
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from chatbot.board import StoreUnwritable
from chatbot.board.tx import ON_MCP
from chatbot.board.web_sessions import Said
from chatbot.chat.authority import Standing, from_config_string
from chatbot.chat.handlers import ChatHandlers
from chatbot.chat.intake import ChatIntake
from chatbot.chat.replies import Origin
from chatbot.chat.web_acts import ACTIONS, PageReplies, act_as_chat
from chatbot.transports.base import Envelope, Identity, IncomingEvent, IncomingMessage

log = logging.getLogger(__name__)

_ids = itertools.count(1)


class NotAnOwner(ValueError):
    """`--as` names someone who may not act: refused before the server starts."""


@dataclass(frozen=True)
class McpOrigin(Origin):
    @property
    def actor(self) -> str:
        return f"{self.identity} via mcp"


# Answers chat gives as plain replies that, to a tool's caller, mean nothing was done.
NOTHING_DONE = frozenset({"unknown_card", "unknown_card_hint", "no_open_question"})


class McpReplies(PageReplies):
    """Replies that become the tool's result; the rooms hear "🤖 <who> via mcp: ..."."""

    said_key = "mcp_said"

    async def say(self, event: IncomingEvent, key: str, **params: Any) -> None:
        if key in NOTHING_DONE:
            params["purpose"] = "refusal"
        await super().say(event, key, **params)


def owner_identity(intake: ChatIntake, written: str) -> Identity:
    """`--as` as the configuration writes owners (`name@server`, `@name:server`); an
    identity that is no configured owner is refused with what to do."""
    try:
        identity = from_config_string(written)
    except ValueError as error:
        raise NotAnOwner(
            f"--as {written!r}: {error}; write an owner as [bot] owners does "
            "(name@server for XMPP, @name:server for Matrix)"
        ) from None
    if intake.authority.role(identity) is not Standing.OWNER:
        raise NotAnOwner(
            f"--as {written!r} is not an owner of this board: only an identity listed in "
            "[bot] owners acts through chatbot mcp; without --as the tools only read"
        )
    return identity


class McpActs:
    def __init__(self, intake: ChatIntake, identity: Identity):
        self.intake = intake
        self.identity = identity

    async def __call__(self, slug: str, action: str, fields: Mapping[str, str]) -> list[Said]:
        """Run the action as the `--as` identity; what chat would have answered."""
        intake = self.intake
        replies = McpReplies(intake.board, intake.locale, prefix=intake.prefixes[0])
        handlers = ChatHandlers(intake.board, replies, intake.handlers.config)
        event = IncomingMessage(
            envelope=Envelope(
                chat=Identity(ON_MCP, str(self.identity)),
                sender=self.identity,
                message_id=f"mcp-{next(_ids)}",
                is_direct=True,
            ),
            text=f"/{action}",
        )
        role = intake.authority.role(self.identity)
        origin = McpOrigin(event, self.identity, role)
        try:
            if role is not Standing.OWNER:
                await replies.say(event, "mcp_owners_only", purpose="refusal")
            elif action not in ACTIONS:
                await replies.say(event, "mcp_unknown_action", action=action, purpose="refusal")
            else:
                await act_as_chat(intake, handlers, origin, slug, action, fields)
        except StoreUnwritable as error:
            await replies.say(event, "store_unwritable", reason=str(error), purpose="refusal")
        except Exception:
            log.exception("mcp action %s on %s by %s failed", action, slug, self.identity)
            await replies.say(event, "internal_error", purpose="refusal")
        return replies.everything()
