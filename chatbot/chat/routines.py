"""Routines in chat: `/every <when> <command>`, `/at <when> <command>`, `/routines` and
`/routine pause|resume|delete <id>`.

The words before the first command are the time (domain/schedules.py reads them, in
`[bot] timezone` or the host's zone), with two options: `--skip` (a time missed while
every bot was down is skipped rather than run once at start) and `--budget <usd>`
(what the cards it starts may spend in all). The command is parsed by the same table
as when typed and must be one that starts work; a card it names must exist now.
When it runs (chat/routine_clock.py) it goes through the same authority check and
handler as typed, as its owner, "via routine".
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from chatbot.board import UnknownCard
from chatbot.board.ports import ChatSide
from chatbot.board.routines import (
    ACTIVE,
    BY_OWNER,
    DONE,
    PAUSED,
    RoutineRow,
    UnknownRoutine,
    new_routine,
)
from chatbot.chat import authority, commands, render
from chatbot.chat.authority import Standing
from chatbot.chat.commands import CommandCall, UsageProblem
from chatbot.chat.host import Facet
from chatbot.chat.replies import Origin, chat_of
from chatbot.chat.texts import say
from chatbot.config import Config
from chatbot.domain.counted import counted
from chatbot.domain.schedules import (
    Schedule,
    ScheduleError,
    canonical_zone,
    local_words,
    local_zone,
    parse,
    zone_problem,
)
from chatbot.notify.format import duration
from chatbot.transports.networks import NETWORKS

#: What clears an owner's own zone (/timezone reset): the configuration's again.
RESET_WORDS = ("reset", "default", "none", "off")
#: The commands a routine may run: those that start work.
STARTING = ("start", "draft", "research", "inspect")


@dataclass(frozen=True)
class Written:
    """What an owner wrote after /every or /at, taken apart."""

    when: str
    command: str
    catch_up: str = "once"
    budget_usd: float | None = None


class RoutineRefused(Exception):
    """A routine that cannot be made: the catalogue key and its values."""

    def __init__(self, key: str, **params: object):
        super().__init__(key)
        self.key = key
        self.params: dict[str, Any] = params


def taken_apart(text: str, prefixes: tuple[str, ...]) -> Written:
    words = text.split()
    at = next((i for i, w in enumerate(words) if commands.is_command(w, prefixes)), None)
    if at is None:
        raise RoutineRefused("routine_no_command")
    when, catch_up, budget = [], "once", None
    head = iter(words[:at])
    for word in head:
        if word == "--skip":
            catch_up = "skip"
        elif word == "--budget":
            value = next(head, "").removeprefix("$")
            try:
                budget = float(value)
            except ValueError:
                raise RoutineRefused("routine_bad_budget") from None
            if budget <= 0:
                raise RoutineRefused("routine_bad_budget")
        else:
            when.append(word)
    return Written(" ".join(when), " ".join(words[at:]), catch_up, budget)


async def checked_command(
    board: ChatSide, command: str, prefixes: tuple[str, ...], locale: str
) -> CommandCall:
    """The command as the table parses it, one that starts work, on a card that exists."""
    parsed = commands.parse(command, prefixes)
    if isinstance(parsed, UsageProblem):
        raise RoutineRefused("routine_bad_command", problem=render.usage_problem(parsed, locale))
    if parsed.name not in STARTING:
        allowed = ", ".join(f"/{name}" for name in STARTING)
        raise RoutineRefused("routine_not_startable", allowed=allowed, command=parsed.name)
    if slug := parsed.text("slug"):
        try:
            await board.reads.card(slug)
        except UnknownCard:
            raise RoutineRefused("routine_no_card", slug=slug, command=parsed.name) from None
    return parsed


def schedule_of_words(when: str, zone: str, now: float, once: bool, locale: str = "en") -> Schedule:
    try:
        return parse(when, zone, now, once=once)
    except ScheduleError as error:
        raise RoutineRefused("routine_bad_when", why=error.said(locale).rstrip(".")) from None


def routine_zone(config: Config | None) -> str:
    # getattr: a test's stand-in configuration may have no [bot] timezone
    zone = getattr(config.bot, "timezone", None) if config is not None else None
    return zone or local_zone()


def clock_words(moment: float, zone: str) -> str:
    """The wall clock in `zone` at `moment`: "Thu 22:15 CET"."""
    return datetime.fromtimestamp(moment, ZoneInfo(zone)).strftime("%a %H:%M %Z")


def rhythm(row: RoutineRow, locale: str) -> str:
    if row.cron is None:
        assert row.at is not None
        when = local_words(row.at, row.timezone)
        return say(locale, "routine_rhythm_at", when=when, zone=row.timezone)
    return say(locale, "routine_rhythm_every", when=row.when_text, zone=row.timezone)


def routine_line(row: RoutineRow, locale: str, now: float) -> str:
    if row.state == ACTIVE and row.next_at is not None:
        next_at = local_words(row.next_at, row.timezone)
        wait = duration(max(row.next_at - now, 0))
        state = say(locale, "routine_next", next=next_at, wait=wait)
    elif row.state == DONE or row.next_at is None:
        state = say(locale, "routine_state_done")
    else:
        state = say(locale, f"routine_state_{row.state}", why=row.why or "-")
    line = say(
        locale,
        "routine_line",
        id=row.id,
        command=row.command,
        rhythm=rhythm(row, locale),
        state=state,
    )
    return line + (say(locale, "routine_from_config") if row.name else "")


def listing(rows: list[RoutineRow], locale: str, now: float) -> str:
    """What /routines (and `chatbot routines`) says."""
    if not rows:
        return say(locale, "routines_none")
    return "\n".join([say(locale, "routines_head"), *(routine_line(r, locale, now) for r in rows)])


def routine_json(row: RoutineRow) -> dict[str, object]:
    return {
        "id": row.id,
        "name": row.name or None,
        "source": row.source,
        "when": row.when_text,
        "cron": row.cron,
        "at": row.at,
        "timezone": row.timezone,
        "command": row.command,
        "owner": row.owner,
        "room": {"transport": row.transport, "target": row.target, "kind": row.target_kind},
        "catch_up": row.catch_up,
        "budget_usd": row.budget_usd,
        "state": row.state,
        "why": row.why or None,
        # Who or what paused or stopped it: owner, failures, budget, owner_gone.
        "pause_cause": row.pause_cause or None,
        "next_at": row.next_at,
        "next_local": local_words(row.next_at, row.timezone) if row.next_at else None,
    }


class RoutineHandlers(Facet):
    @property
    def routine_prefixes(self) -> tuple[str, ...]:
        if self.config is not None:
            return tuple(self.config.bot.command_prefixes)
        return commands.DEFAULT_PREFIXES

    async def every(self, origin: Origin, invocation: CommandCall) -> None:
        await self._make(origin, invocation, once=False)

    async def at(self, origin: Origin, invocation: CommandCall) -> None:
        await self._make(origin, invocation, once=True)

    async def _make(self, origin: Origin, invocation: CommandCall, *, once: bool) -> None:
        now = time.time()
        try:
            written = taken_apart(invocation.text("when+command"), self.routine_prefixes)
            zone = await self.zone_of(str(origin.identity))
            schedule = schedule_of_words(written.when, zone, now, once, self.replies.locale)
            parsed = await checked_command(
                self.board, written.command, self.routine_prefixes, self.replies.locale
            )
        except RoutineRefused as refused:
            await self.replies.say(origin.event, refused.key, purpose="refusal", **refused.params)
            return
        command = commands.PREFIX + written.command.split(maxsplit=1)[0].lstrip("/!").lower()
        command = " ".join([command, *written.command.split()[1:]])
        assert parsed is not None
        row = new_routine(
            schedule,
            command,
            str(origin.identity),
            chat_of(origin.event),
            now,
            catch_up=written.catch_up,
            budget_usd=written.budget_usd,
        )
        made = await self.board.routines.add(row)
        assert made.next_at is not None
        await self.replies.say(
            origin.event,
            "routine_made",
            id=made.id,
            command=made.command,
            rhythm=rhythm(made, self.replies.locale),
            next=local_words(made.next_at, made.timezone),
            wait=duration(made.next_at - now),
        )

    async def zone_of(self, owner: str) -> str:
        """The zone a routine `owner` makes reads its times in: theirs, else the config's."""
        return await self.board.routines.owner_zone(owner) or routine_zone(self.config)

    async def routines(self, origin: Origin, invocation: CommandCall) -> None:
        rows = await self.board.routines.listed()
        locale = self.replies.locale
        shown = listing(rows, locale, time.time()) if rows else say(locale, "routines_none")
        own = await self.board.routines.owner_zone(str(origin.identity))
        if own is not None:
            shown += "\n" + say(locale, "routines_your_zone", zone=own)
        elif origin.role is Standing.OWNER:
            shown += "\n" + say(locale, "routines_config_zone", zone=routine_zone(self.config))
        await self.replies.send(origin.event, shown)

    async def timezone(self, origin: Origin, invocation: CommandCall) -> None:
        """`/timezone`: the asker's zone; `/timezone <zone>` sets it, `reset` clears it."""
        event, owner, now = origin.event, str(origin.identity), time.time()
        default = routine_zone(self.config)
        written = invocation.text("zone")
        if not written:
            own = await self.board.routines.owner_zone(owner)
            zone = own or default
            key = "timezone_own" if own else "timezone_default"
            await self.replies.say(
                event, key, zone=zone, now=clock_words(now, zone), default=default
            )
            return
        if written.lower() in RESET_WORDS:
            await self.board.routines.set_owner_zone(owner, None, now)
            await self.replies.say(event, "timezone_reset", zone=default)
            return
        chosen = canonical_zone(written)
        if chosen is None:
            why = zone_problem(written, self.replies.locale) or written
            await self.replies.say(
                event, "timezone_bad", why=why, default=default, purpose="refusal"
            )
            return
        kept = await self.board.routines.set_owner_zone(owner, chosen, now)
        kept_words = (
            say(
                self.replies.locale,
                "timezone_kept",
                count=counted(kept, "routine", self.replies.locale),
            )
            if kept
            else ""
        )
        await self.replies.say(
            event, "timezone_set", zone=chosen, now=clock_words(now, chosen), kept=kept_words
        )

    async def routine(self, origin: Origin, invocation: CommandCall) -> None:
        what, routine_id = invocation.text("what"), invocation.number("id")
        event = origin.event
        try:
            row = await self.board.routines.get(routine_id)
            if row.name and what == "delete":
                await self.replies.say(
                    event, "routine_config_kept", id=row.id, name=row.name, purpose="refusal"
                )
                return
            if what == "delete":
                await self.board.routines.delete(routine_id)
                await self.replies.say(event, "routine_deleted", id=row.id, command=row.command)
            elif what == "pause":
                why = say(self.replies.locale, "routine_why_owner", who=str(origin.identity))
                await self.board.routines.set_state(routine_id, PAUSED, why, cause=BY_OWNER)
                await self.replies.say(event, "routine_paused", id=row.id)
            else:
                found = await self.board.routines.set_state(routine_id, ACTIVE)
                if found.next_at is None:
                    await self.replies.say(event, "routine_resumed_done", id=row.id)
                else:
                    next_at = local_words(found.next_at, found.timezone)
                    await self.replies.say(event, "routine_resumed", id=row.id, next=next_at)
        except UnknownRoutine:
            await self.replies.say(event, "routine_unknown", id=routine_id, purpose="refusal")


def configured_room(config: Config, owner: str, room: str) -> dict[str, str]:
    """Where a [[routines]] entry answers: its room, else the first room of its owner's
    network, else the console's person."""
    owner_network = authority.from_config_string(owner).transport
    for network in NETWORKS.values():
        # getattr: the section the network's record names, and its rooms if it has any
        section = getattr(config, network.section, None)
        rooms = list(getattr(section, "rooms", None) or [])
        if (room and room in rooms) or (not room and network.name == owner_network and rooms):
            return {"transport": network.name, "target": room or rooms[0], "target_kind": "room"}
    if not room and (console := config.console_owner) is not None:
        return {"transport": "console", "target": console, "target_kind": "person"}
    raise ValueError(
        f"room {room!r} is none of the configured rooms" if room else "no room to answer in"
    )


def rows_of_config(config: Config, now: float) -> list[RoutineRow]:
    """The board's rows for `[[routines]]` (raises ValueError for an entry that cannot
    be: `chatbot check` says which)."""
    rows = []
    for entry in config.routines:
        zone = entry.timezone or routine_zone(config)
        when = entry.every if entry.every is not None else entry.at
        assert when is not None
        try:
            schedule = parse(when, zone, 0.0, once=entry.at is not None)
        except ScheduleError as error:
            raise ValueError(f"[[routines]] {entry.name}: {error}") from None
        chat = configured_room(config, entry.owner, entry.room)
        owner = str(authority.from_config_string(entry.owner))
        if chat["transport"] == authority.CONSOLE:
            owner = f"{authority.CONSOLE}:{chat['target']}"
        rows.append(
            new_routine(
                schedule,
                entry.command.strip(),
                owner,
                chat,
                now,
                catch_up=entry.catch_up,
                budget_usd=entry.budget_usd,
                name=entry.name,
            )
        )
    return rows


async def keep_config_routines(board: ChatSide, config: Config) -> list[RoutineRow]:
    """The board's config routines made those of `[[routines]]` (at start, and before
    `chatbot routines` lists them)."""
    now = time.time()
    return await board.routines.keep_config(rows_of_config(config, now), now)
