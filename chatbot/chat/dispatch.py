"""Which method of `ChatHandlers` or of its facets carries out each command of the table.

The command table (commands.py) names a handler; this module is the one place where that
name meets its function: a reference a reader and the type checker can follow, checked
when the module is imported, so a name without a method fails at start, not at the first
use of the command. Chat, the web's acts and routines all dispatch through `carry_out`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping

from chatbot.chat.commands import COMMANDS, Command, CommandCall
from chatbot.chat.handlers import ChatHandlers
from chatbot.chat.replies import Origin

#: From the handlers to the bound method of their facet that carries out a command: a
#: reference the checker follows (a lambda, since the facets are made per ChatHandlers).
Handler = Callable[[ChatHandlers], Callable[[Origin, CommandCall], Awaitable[None]]]

HANDLERS: dict[str, Handler] = {
    "allow": lambda h: h.spending.allow,
    "answer": lambda h: h.answer,
    "approve": lambda h: h.talking.approve,
    "at": lambda h: h.routines.at,
    "attach": lambda h: h.attaching.attach,
    "budget": lambda h: h.spending.budget,
    "comment": lambda h: h.commenting.comment,
    "decide": lambda h: h.requesting.decide,
    "deny": lambda h: h.talking.deny,
    "diff": lambda h: h.commenting.diff,
    "draft": lambda h: h.draft,
    "every": lambda h: h.routines.every,
    "help": lambda h: h.lookups.help,
    "inbox": lambda h: h.lookups.inbox,
    "interrupt": lambda h: h.talking.interrupt,
    "log": lambda h: h.lookups.log,
    "move": lambda h: h.move,
    "routine": lambda h: h.routines.routine,
    "routines": lambda h: h.routines.routines,
    "runs": lambda h: h.spending.runs,
    "status": lambda h: h.lookups.status,
    "steer": lambda h: h.talking.steer,
    "timezone": lambda h: h.routines.timezone,
    "web": lambda h: h.web_signin.web,
    "why": lambda h: h.lookups.why,
}


def check(commands: Iterable[Command], handlers: Mapping[str, Handler]) -> None:
    """Every handler a command names exists, and every handler is named by a command."""
    named = {command.handler for command in commands}
    unbound = sorted(named - handlers.keys())
    if unbound:
        raise RuntimeError(f"commands name handlers that do not exist: {', '.join(unbound)}")
    unused = sorted(handlers.keys() - named)
    if unused:
        raise RuntimeError(f"handlers no command names: {', '.join(unused)}")


check(COMMANDS, HANDLERS)


async def carry_out(handlers: ChatHandlers, origin: Origin, invocation: CommandCall) -> None:
    """Run the command's handler for `origin` (who asked, from where)."""
    await HANDLERS[invocation.command.handler](handlers)(origin, invocation)
