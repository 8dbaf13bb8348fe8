"""Routines on the board: commands on a schedule, each occurrence decided once.

`claim_due(now)` is the one step every bot process takes on its clock: in one
transaction it reads the routines whose next time has come, inserts the run of each
occurrence under the unique key (routine, due_at) and moves `next_at` on. Only the
process whose insert counted gets the occurrence back to fire; on one PostgreSQL
board two bots looking at the same moment start one card, not two. The claim is
written before the command runs, so a crash between them loses that occurrence
rather than running it twice.

An occurrence found more than `LATE_S` after its time was missed while every bot
was down: the routine's `catch_up` says whether the newest missed one runs now
("once") or none does ("skip"); older ones in between are never run.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from chatbot.board.errors import BoardError
from chatbot.domain.schedules import Schedule, zone_problem
from chatbot.store import routines as routine_store
from chatbot.store import spend as spend_store
from chatbot.store.db import Store
from chatbot.store.routines import (  # noqa: F401 - the records and words chat uses
    ACTIVE,
    BY_BUDGET,
    BY_FAILURES,
    BY_OWNER,
    DONE,
    FAILED,
    HELD,
    OUTCOMES,
    OWNER_GONE,
    PAUSED,
    RAN,
    REFUSED,
    SKIPPED,
    STOPPED,
    RoutineRow,
    RunRow,
)

#: Imported names other modules take from here: part of this module's interface.
__all__ = [
    "ACTIVE",
    "BY_BUDGET",
    "BY_OWNER",
    "DONE",
    "FAILED",
    "HELD",
    "OUTCOMES",
    "OWNER_GONE",
    "PAUSED",
    "RAN",
    "REFUSED",
    "RoutineRow",
    "SKIPPED",
    "STOPPED",
]

#: Found this long after its time, an occurrence was missed (the loop wakes on time).
LATE_S = 120.0
#: This many failed runs in a row pause a routine and put it in the inbox.
FAILURES_TO_PAUSE = 3
FAILED_OUTCOMES = (routine_store.REFUSED, routine_store.FAILED)


class UnknownRoutine(BoardError):
    def __init__(self, routine_id: int):
        super().__init__(f"no routine #{routine_id}")
        self.routine_id = routine_id


def schedule_of(row: RoutineRow) -> Schedule:
    return Schedule(row.when_text, row.timezone, row.cron, row.at)


def new_routine(
    schedule: Schedule,
    command: str,
    owner: str,
    chat: dict[str, str],
    now: float,
    *,
    catch_up: str = "once",
    budget_usd: float | None = None,
    name: str = "",
) -> RoutineRow:
    """A routine to add: `chat` is where it answers (chat/replies.chat_of's form)."""
    next_at = schedule.next_after(now)
    return RoutineRow(
        id=0,
        name=name,
        source="config" if name else "chat",
        when_text=schedule.when,
        cron=schedule.cron,
        at=schedule.at,
        timezone=schedule.zone,
        command=command,
        owner=owner,
        transport=chat["transport"],
        target=chat["target"],
        target_kind=chat["target_kind"],
        catch_up=catch_up,
        budget_usd=budget_usd,
        state=routine_store.ACTIVE if next_at is not None else routine_store.DONE,
        why="",
        next_at=next_at,
        created_at=now,
        updated_at=now,
    )


@dataclass(frozen=True)
class Occurrence:
    """One occurrence this process decided: to fire it, or that it was skipped."""

    routine: RoutineRow
    due_at: float
    #: Missed while every bot was down (run once at start, or skipped).
    late: bool
    skipped: bool
    #: How many occurrences were missed in all (the newest is this one).
    missed: int = 0


class BoardRoutines:
    """The board's routines (`board.routines`): chat's /routine commands and the clock."""

    def __init__(self, store: Store):
        self.store = store
        #: Called after a routine is made or changed here: the clock's next time moved.
        self.wakers: list[Callable[[], None]] = []

    def _routines_changed(self) -> None:
        for wake in self.wakers:
            wake()

    async def add(self, row: RoutineRow) -> RoutineRow:
        async with self.store.transaction() as db:
            routine_id = await routine_store.add(db, row)
            found = await routine_store.get(db, routine_id)
        assert found is not None
        self._routines_changed()
        return found

    async def listed(self) -> list[RoutineRow]:
        return await routine_store.listed(self.store.reader)

    async def get(self, routine_id: int) -> RoutineRow:
        found = await routine_store.get(self.store.reader, routine_id)
        if found is None:
            raise UnknownRoutine(routine_id)
        return found

    async def runs(self, routine_id: int, limit: int = 10) -> list[RunRow]:
        return await routine_store.runs(self.store.reader, routine_id, limit)

    async def outcomes(self) -> dict[str, int]:
        return await routine_store.outcomes(self.store.reader)

    async def next_at(self) -> float | None:
        return await routine_store.next_due(self.store.reader)

    async def set_state(
        self,
        routine_id: int,
        state: str,
        why: str = "",
        now: float | None = None,
        cause: str | None = None,
    ) -> RoutineRow:
        """Pause, resume (from now on: what was missed while paused is not run) or stop;
        `cause` says who or what paused or stopped it (store/routines.py PAUSE_CAUSES:
        by default an owner paused it, and a stopped one's owner is gone)."""
        if cause is None:
            cause = {PAUSED: BY_OWNER, STOPPED: OWNER_GONE}.get(state, "")
        if cause not in routine_store.PAUSE_CAUSES or (cause == "") != (state in (ACTIVE, DONE)):
            raise ValueError(f"a routine {state} for cause {cause!r}")
        now = time.time() if now is None else now
        async with self.store.transaction() as db:
            row = await routine_store.get(db, routine_id)
            if row is None:
                raise UnknownRoutine(routine_id)
            next_at = None
            if state == routine_store.ACTIVE:
                next_at = schedule_of(row).next_after(now)
                if next_at is None:
                    state, why = routine_store.DONE, "its time has passed"
            if state == routine_store.DONE:
                cause = ""
            await routine_store.set_state(db, routine_id, state, why, now, next_at, cause)
            found = await routine_store.get(db, routine_id)
        assert found is not None
        self._routines_changed()
        return found

    async def delete(self, routine_id: int) -> RoutineRow:
        async with self.store.transaction() as db:
            row = await routine_store.get(db, routine_id)
            if row is None:
                raise UnknownRoutine(routine_id)
            await routine_store.delete(db, routine_id)
        return row

    async def claim_due(self, now: float) -> list[Occurrence]:
        """Decide every occurrence due at `now`; the ones this process won."""
        won: list[Occurrence] = []
        # Most looks find nothing due: they take no write lock and commit nothing.
        if not await routine_store.due(self.store.reader, now):
            return won
        async with self.store.transaction() as db:
            for row in await routine_store.due(db, now):
                schedule = schedule_of(row)
                assert row.next_at is not None
                times = [row.next_at, *schedule.between(row.next_at, now)]
                due_at = times[-1]
                late = now - due_at > LATE_S
                skipped = late and row.catch_up == "skip"
                outcome = routine_store.SKIPPED if skipped else routine_store.CLAIMED
                following = schedule.next_after(now)
                if following is None:
                    await routine_store.set_state(db, row.id, routine_store.DONE, "", now)
                await routine_store.update(db, row.id, now, next_at=following)
                if await routine_store.claim(db, row.id, due_at, outcome, late, now):
                    won.append(Occurrence(row, due_at, late, skipped, len(times) if late else 0))
        return won

    async def finish_run(
        self,
        occurrence: Occurrence,
        outcome: str,
        slug: str | None,
        detail: str,
        now: float,
        pause_why: Callable[[int, str], str] | None = None,
    ) -> bool:
        """Record what the run came to; True when it was the third failure in a row and
        the routine paused itself (`pause_why(count, detail)` words why, in the chat's
        language; English without it)."""
        routine = occurrence.routine
        async with self.store.transaction() as db:
            await routine_store.finish(
                db, routine.id, occurrence.due_at, outcome, slug, detail[:500], now
            )
            if outcome not in FAILED_OUTCOMES:
                return False
            last = await routine_store.runs(db, routine.id, FAILURES_TO_PAUSE)
            failed = [run for run in last if run.outcome in FAILED_OUTCOMES]
            if len(failed) < FAILURES_TO_PAUSE:
                return False
            current = await routine_store.get(db, routine.id)
            if current is None or current.state != routine_store.ACTIVE:
                return False
            words = pause_why or (lambda count, said: f"its last {count} runs failed: {said}")
            why = words(FAILURES_TO_PAUSE, detail[:200])
            paused = routine_store.PAUSED
            await routine_store.set_state(db, routine.id, paused, why, now, cause=BY_FAILURES)
        return True

    async def owner_zone(self, owner: str) -> str | None:
        """The zone `owner` set for the routines they make (/timezone); None: the config's."""
        return await routine_store.owner_zone(self.store.reader, owner)

    async def owner_zones(self) -> dict[str, str]:
        return await routine_store.owner_zones(self.store.reader)

    async def set_owner_zone(self, owner: str, zone: str | None, now: float | None = None) -> int:
        """Set (None: clear) `owner`'s zone; how many routines they made keep their own."""
        if zone is not None and (why := zone_problem(zone)) is not None:
            raise ValueError(why)
        now = time.time() if now is None else now
        async with self.store.transaction() as db:
            await routine_store.set_owner_zone(db, owner, zone, now)
            return await routine_store.routines_of(db, owner)

    async def spent(self, routine_id: int) -> float:
        """What the cards this routine started have cost so far, in USD."""
        reader = self.store.reader
        total = 0.0
        for slug in await routine_store.cards_of(reader, routine_id):
            row = await reader.fetchone("SELECT id FROM cards WHERE slug = ?", (slug,))
            if row is not None:
                total += (await spend_store.of_card(reader, row[0])).usd
        return total

    async def keep_config(self, rows: list[RoutineRow], now: float) -> list[RoutineRow]:
        """Make the board's config routines those of the configuration: a new name is
        added, a changed one takes its new schedule and command (its runs and pause kept),
        one gone from the file is deleted."""
        names = {row.name for row in rows}
        async with self.store.transaction() as db:
            for old in await routine_store.listed(db):
                if old.source == "config" and old.name not in names:
                    await routine_store.delete(db, old.id)
            for row in rows:
                existing = await routine_store.by_name(db, row.name)
                if existing is None:
                    await routine_store.add(db, row)
                    continue
                changed = (existing.when_text, existing.timezone, existing.command) != (
                    row.when_text,
                    row.timezone,
                    row.command,
                )
                values = {
                    "owner": row.owner,
                    "transport": row.transport,
                    "target": row.target,
                    "target_kind": row.target_kind,
                    "catch_up": row.catch_up,
                    "budget_usd": row.budget_usd,
                }
                if changed:
                    values |= {
                        "when_text": row.when_text,
                        "cron": row.cron,
                        "at": row.at,
                        "timezone": row.timezone,
                        "command": row.command,
                        "next_at": row.next_at,
                    }
                await routine_store.update(db, existing.id, now, **values)
            found = [r for r in await routine_store.listed(db) if r.source == "config"]
        self._routines_changed()
        return found
