"""Which method of `ChatHandlers` carries out each command of the table.

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

Handler = Callable[[ChatHandlers, Origin, CommandCall], Awaitable[None]]

HANDLERS: dict[str, Handler] = {
    "allow": ChatHandlers.allow,
    "answer": ChatHandlers.answer,
    "approve": ChatHandlers.approve,
    "at": ChatHandlers.at,
    "attach": ChatHandlers.attach,
    "budget": ChatHandlers.budget,
    "comment": ChatHandlers.comment,
    "decide": ChatHandlers.decide,
    "deny": ChatHandlers.deny,
    "diff": ChatHandlers.diff,
    "draft": ChatHandlers.draft,
    "every": ChatHandlers.every,
    "help": ChatHandlers.help,
    "inbox": ChatHandlers.inbox,
    "interrupt": ChatHandlers.interrupt,
    "log": ChatHandlers.log,
    "move": ChatHandlers.move,
    "routine": ChatHandlers.routine,
    "routines": ChatHandlers.routines,
    "runs": ChatHandlers.runs,
    "status": ChatHandlers.status,
    "steer": ChatHandlers.steer,
    "timezone": ChatHandlers.timezone,
    "web": ChatHandlers.web,
    "why": ChatHandlers.why,
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
    await HANDLERS[invocation.command.handler](handlers, origin, invocation)
