"""`[[routines]]`: routines kept with the deployment, beside those made in chat.

Each names itself (the name keeps its runs and a pause across restarts and edits),
says when (`every`: a rhythm in words or cron fields; `at`: one moment, written as a
date "2026-12-24 18:00" since "tomorrow" means nothing in a file), the command it
runs, the owner it runs as (one of `[bot] owners`) and, optionally, the room that
hears it (one of the configured rooms; by default the first room of the owner's
network). The start of the bot makes the board's config routines these
(board/routines.py `keep_config_routines`); `chatbot check` also checks each
command against the board.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import Field, StringConstraints, model_validator

from chatbot.config.base import USD, Section
from chatbot.config_file import KeyProblem
from chatbot.domain.schedules import ScheduleError, parse, zone_problem

NAME = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9-]{0,62}$")]
_DATED = re.compile(r"^\d{4}-\d{2}-\d{2} \d{1,2}(:\d{2})?\s*(am|pm)?$")


class RoutineEntry(Section):
    # Lower-case letters, digits and dashes; unique among [[routines]].
    name: NAME
    # A rhythm: "weekdays 09:00", "monday 9am", "every day 18:30" or "0 9 * * 1-5".
    every: str | None = None
    # One moment instead: "2026-12-24 18:00".
    at: str | None = None
    # The command, as typed in chat: /start, /draft, /research or /inspect.
    command: Annotated[str, StringConstraints(min_length=2, max_length=4000)]
    # Who it runs as (one of [bot] owners); removed from owners, it stops.
    owner: str
    # The room that hears it (one of [xmpp] or [matrix] rooms); "": the owner's first.
    room: str = ""
    # A time missed while every bot was down: run once at the start, or skip it.
    catch_up: Literal["once", "skip"] = "once"
    # What the cards it starts may spend in all; reached, it pauses.
    budget_usd: USD | None = None
    # An IANA zone; "": [bot] timezone, else the host's.
    timezone: str = ""

    @model_validator(mode="after")
    def _when(self) -> RoutineEntry:
        where = f"routines.{self.name}"
        if (self.every is None) == (self.at is None):
            raise KeyProblem(where, 'give exactly one of every = "..." or at = "..."')
        if self.timezone and (why := zone_problem(self.timezone)):
            raise KeyProblem(f"{where}.timezone", why)
        if self.at is not None and not _DATED.match(self.at.strip().lower()):
            raise KeyProblem(
                f"{where}.at", f'{self.at!r}: write a date and time, "2026-12-24 18:00"'
            )
        try:
            # The syntax only: a moment that has passed is a routine that is done.
            if self.every is not None:
                parse(self.every, self.timezone or "UTC", 0.0, once=False)
            else:
                parse(self.at or "", self.timezone or "UTC", 0.0, once=True)
        except ScheduleError as error:
            key = "every" if self.every is not None else "at"
            raise KeyProblem(f"{where}.{key}", str(error)) from None
        if not self.command.lstrip().startswith(("/", "!")):
            raise KeyProblem(f"{where}.command", f'{self.command!r}: write it as typed, "/start x"')
        return self


def unique_names(entries: list[RoutineEntry]) -> None:
    seen: set[str] = set()
    for entry in entries:
        if entry.name in seen:
            raise KeyProblem(f"routines.{entry.name}", "another [[routines]] has this name")
        seen.add(entry.name)


RoutineList = Annotated[list[RoutineEntry], Field(default_factory=list)]
