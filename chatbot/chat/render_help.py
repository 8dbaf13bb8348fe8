"""/help, generated from the command and reaction tables.

`/help` is where a new person starts: the few commands to begin with, for what the
asker may do, and where the rest is. `/help all` is every command the asker may run
(owners: and the reactions); `/help <command>` one of them. A chat network with a
syntax of its own (the console's `>N`, `+N`) gives its lines, appended to both lists.
"""

from __future__ import annotations

from chatbot.chat import reactions
from chatbot.chat.authority import Permission, Standing, permits
from chatbot.chat.commands import BY_NAME, COMMANDS, Command, Problem, UsageProblem
from chatbot.chat.render import usage_problem
from chatbot.chat.texts import say

#: What a new person does first: describe work, build it, see the board, what waits
#: for them, and why a card does not move. Owners and requesters may use each.
STARTERS: tuple[str, ...] = ("draft", "start", "status", "inbox", "why")
#: The word after /help that asks for everything (no command is called so).
ALL = "all"


def _command_line(command: Command, locale: str, access: str | None = None) -> str:
    """One command for /help; `access` is the key of who may use it ("" leaves it out)."""
    text = say(locale, command.help_key)
    if access == "":
        return say(locale, "help_line_bare", usage=command.usage, text=text)
    access = access or f"access_{command.access.value}"
    return say(locale, "help_line", usage=command.usage, text=text, access=say(locale, access))


def _for(role: Standing, command: Command, locale: str) -> str | None:
    """The command's line as a requester reads it (None: not theirs to use)."""
    verdict = permits(role, command.access)
    if verdict is Permission.DENY:
        return None
    yours = "access_request_yours" if verdict is Permission.AS_REQUEST else ""
    return _command_line(command, locale, yours)


def help_text(
    locale: str,
    name: str | None = None,
    role: Standing = Standing.OWNER,
    identity: str | None = None,
    network_lines: str = "",
) -> str:
    """/help for the asker: where to start, or (`name` "all") everything they may run,
    or one command. Anyone not an owner or requester gets only /help and how to get in
    (`identity` is theirs, None when the room hides it). `network_lines` (the asker's
    chat network's own syntax) end both lists."""
    if role is Standing.STRANGER:
        lines = [_command_line(BY_NAME["help"], locale)]
        if identity is None:
            lines.append(say(locale, "help_stranger_hidden"))
        else:
            lines.append(say(locale, "help_stranger", identity=identity))
        return "\n".join(lines)
    if name is not None and name != ALL:
        command = BY_NAME.get(name)
        if command is None:
            return usage_problem(UsageProblem(Problem.UNKNOWN_COMMAND, None, name), locale)
        return _command_line(command, locale)
    lines = _everything(locale, role) if name == ALL else _start(locale, role)
    if network_lines:
        lines.append(network_lines)
    return "\n".join(lines)


def _start(locale: str, role: Standing) -> list[str]:
    lines = [say(locale, "help_start")]
    if role is Standing.REQUESTER:
        lines += [line for name in STARTERS if (line := _for(role, BY_NAME[name], locale))]
        return [*lines, say(locale, "help_more_requester")]
    lines += [_command_line(BY_NAME[name], locale, "") for name in STARTERS]
    return [*lines, say(locale, "help_start_answers"), say(locale, "help_more")]


def _everything(locale: str, role: Standing) -> list[str]:
    lines = [say(locale, "help_commands")]
    if role is Standing.REQUESTER:
        lines += [line for command in COMMANDS if (line := _for(role, command, locale))]
        return [*lines, say(locale, "help_requester"), say(locale, "help_edits")]
    lines += [_command_line(c, locale) for c in COMMANDS]
    lines.append(say(locale, "help_reactions"))
    lines += [
        say(locale, "help_reaction_line", emoji=shown, text=say(locale, key))
        for shown, key in reactions.help_rows()
    ]
    return [*lines, say(locale, "help_answers"), say(locale, "help_edits")]


def in_messages(text: str, max_chars: int) -> list[str]:
    """`text` as few messages of at most `max_chars`, cut between lines: the whole list
    (German runs past one message) is read in two, not cut short with "… more lines"."""
    parts: list[list[str]] = [[]]
    size = 0
    for line in text.split("\n"):
        if parts[-1] and size + 1 + len(line) > max_chars:
            parts.append([])
            size = 0
        size += len(line) + (1 if len(parts[-1]) else 0)
        parts[-1].append(line)
    return ["\n".join(part) for part in parts]
