"""The rows of routines (commands on a schedule) and of their runs.

A routine keeps its schedule as written and as read (cron fields or one moment, and
its zone), the command, whose it is and where it answers, and `next_at`: the next
occurrence nobody has decided yet. Each occurrence becomes one `routine_runs` row
under the unique key (routine, due_at): whichever process inserts it fires it, every
other process's insert does nothing. So one occurrence is one run across every bot
and worker on the database, and a restart finds it decided.
"""

from __future__ import annotations

from dataclasses import dataclass

from chatbot.store.db import Db, Row

ACTIVE, PAUSED, STOPPED, DONE = "active", "paused", "stopped", "done"
# What became of an occurrence.
CLAIMED, RAN, REFUSED, FAILED, SKIPPED, HELD = (
    "claimed",
    "ran",
    "refused",
    "failed",
    "skipped",
    "held",
)
# A run's outcome "stopped": its owner was no longer an owner (the routine's state too).
OUTCOMES = (RAN, REFUSED, FAILED, SKIPPED, HELD, STOPPED)
# Why a routine is paused or stopped, as a value (its `why` says it in words): an owner
# paused it, it paused itself (its last runs failed, its budget was spent: these wait in
# the inbox), or its owner is no longer an owner. '' while it runs.
BY_OWNER, BY_FAILURES, BY_BUDGET, OWNER_GONE = "owner", "failures", "budget", "owner_gone"
PAUSE_CAUSES = ("", BY_OWNER, BY_FAILURES, BY_BUDGET, OWNER_GONE)
#: The causes of a routine that paused itself: it waits for an owner in the inbox.
PAUSED_ITSELF = (BY_FAILURES, BY_BUDGET)

_COLUMNS = (
    "id, name, source, when_text, cron, at, timezone, command, owner, transport, target, "
    "target_kind, catch_up, budget_usd, state, why, next_at, created_at, updated_at, "
    "pause_cause"
)


@dataclass(frozen=True)
class RoutineRow:
    id: int
    #: A config routine's name ([[routines]] name); '' for one made in chat.
    name: str
    source: str
    when_text: str
    cron: str | None
    at: float | None
    timezone: str
    command: str
    owner: str
    transport: str
    target: str
    target_kind: str
    catch_up: str
    budget_usd: float | None
    state: str
    why: str
    next_at: float | None
    created_at: float
    updated_at: float
    #: Why it is paused or stopped (PAUSE_CAUSES); '' while it runs.
    pause_cause: str = ""

    @classmethod
    def from_row(cls, row: Row) -> RoutineRow:
        return cls(*row)


@dataclass(frozen=True)
class RunRow:
    routine_id: int
    due_at: float
    outcome: str
    slug: str | None
    detail: str
    late: bool
    claimed_at: float


async def add(db: Db, row: RoutineRow) -> int:
    # getattr: the row's values in the order of the insert's column list, by their names
    values = [getattr(row, name.strip()) for name in _COLUMNS.split(",")][1:]
    return await db.insert(
        f"INSERT INTO routines ({_COLUMNS.removeprefix('id, ')}) "
        f"VALUES ({', '.join('?' * len(values))})",
        values,
    )


async def get(db: Db, routine_id: int) -> RoutineRow | None:
    row = await db.fetchone(f"SELECT {_COLUMNS} FROM routines WHERE id = ?", (routine_id,))
    return RoutineRow.from_row(row) if row else None


async def by_name(db: Db, name: str) -> RoutineRow | None:
    row = await db.fetchone(
        f"SELECT {_COLUMNS} FROM routines WHERE source = 'config' AND name = ?", (name,)
    )
    return RoutineRow.from_row(row) if row else None


async def listed(db: Db) -> list[RoutineRow]:
    rows = await db.fetchall(f"SELECT {_COLUMNS} FROM routines ORDER BY id")
    return [RoutineRow.from_row(row) for row in rows]


async def due(db: Db, now: float) -> list[RoutineRow]:
    rows = await db.fetchall(
        f"SELECT {_COLUMNS} FROM routines WHERE state = ? AND next_at <= ? ORDER BY next_at, id",
        (ACTIVE, now),
    )
    return [RoutineRow.from_row(row) for row in rows]


async def next_due(db: Db) -> float | None:
    row = await db.fetchone("SELECT MIN(next_at) FROM routines WHERE state = ?", (ACTIVE,))
    return row[0] if row else None


async def set_state(
    db: Db,
    routine_id: int,
    state: str,
    why: str,
    now: float,
    next_at: float | None = None,
    cause: str = "",
) -> int:
    return await db.execute(
        "UPDATE routines SET state = ?, why = ?, pause_cause = ?, "
        "next_at = COALESCE(?, next_at), updated_at = ? WHERE id = ?",
        (state, why, cause, next_at, now, routine_id),
    )


async def paused_themselves(db: Db) -> list[tuple[int, str, str, float]]:
    """(id, command, why, updated_at) of the routines that paused themselves, oldest first."""
    rows = await db.fetchall(
        "SELECT id, command, why, updated_at FROM routines WHERE state = ? AND pause_cause IN "
        f"({', '.join('?' * len(PAUSED_ITSELF))}) ORDER BY updated_at, id",
        (PAUSED, *PAUSED_ITSELF),
    )
    return [(row[0], row[1], row[2], row[3]) for row in rows]


async def update(db: Db, routine_id: int, now: float, **values: object) -> None:
    sets = ", ".join(f"{name} = ?" for name in values)
    await db.execute(
        f"UPDATE routines SET {sets}, updated_at = ? WHERE id = ?",
        (*values.values(), now, routine_id),
    )


async def delete(db: Db, routine_id: int) -> int:
    return await db.execute("DELETE FROM routines WHERE id = ?", (routine_id,))


async def claim(
    db: Db, routine_id: int, due_at: float, outcome: str, late: bool, now: float
) -> bool:
    """Insert the occurrence's run: True for the one process whose insert counted."""
    inserted = await db.execute(
        "INSERT INTO routine_runs (routine_id, due_at, outcome, late, claimed_at) "
        "VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
        (routine_id, due_at, outcome, int(late), now),
    )
    return inserted == 1


async def finish(
    db: Db, routine_id: int, due_at: float, outcome: str, slug: str | None, detail: str, now: float
) -> None:
    await db.execute(
        "UPDATE routine_runs SET outcome = ?, slug = ?, detail = ?, finished_at = ? "
        "WHERE routine_id = ? AND due_at = ?",
        (outcome, slug, detail, now, routine_id, due_at),
    )


async def runs(db: Db, routine_id: int, limit: int = 10) -> list[RunRow]:
    rows = await db.fetchall(
        "SELECT routine_id, due_at, outcome, slug, detail, late, claimed_at FROM routine_runs "
        "WHERE routine_id = ? ORDER BY due_at DESC LIMIT ?",
        (routine_id, limit),
    )
    return [RunRow(r[0], r[1], r[2], r[3], r[4], bool(r[5]), r[6]) for r in rows]


async def outcomes(db: Db) -> dict[str, int]:
    rows = await db.fetchall("SELECT outcome, COUNT(*) FROM routine_runs GROUP BY outcome")
    return {row[0]: row[1] for row in rows}


async def cards_of(db: Db, routine_id: int) -> list[str]:
    rows = await db.fetchall(
        "SELECT DISTINCT slug FROM routine_runs WHERE routine_id = ? AND slug IS NOT NULL",
        (routine_id,),
    )
    return [row[0] for row in rows]


async def owner_zone(db: Db, owner: str) -> str | None:
    """The zone `owner` ("xmpp:owner@host") set for their routines; None: the config's."""
    row = await db.fetchone("SELECT timezone FROM owner_settings WHERE owner = ?", (owner,))
    return row[0] if row else None


async def set_owner_zone(db: Db, owner: str, zone: str | None, now: float) -> None:
    await db.execute(
        "INSERT INTO owner_settings (owner, timezone, updated_at) VALUES (?, ?, ?) "
        "ON CONFLICT (owner) DO UPDATE SET timezone = excluded.timezone, "
        "updated_at = excluded.updated_at",
        (owner, zone, now),
    )


async def owner_zones(db: Db) -> dict[str, str]:
    rows = await db.fetchall(
        "SELECT owner, timezone FROM owner_settings WHERE timezone IS NOT NULL ORDER BY owner"
    )
    return {row[0]: row[1] for row in rows}


async def routines_of(db: Db, owner: str) -> int:
    """How many routines `owner` made in chat (a config routine's zone is the file's)."""
    row = await db.fetchone(
        "SELECT COUNT(*) FROM routines WHERE owner = ? AND source = 'chat'", (owner,)
    )
    return row[0] if row else 0


# Each owner's own settings, one row per owner who set one: for now the zone their
# routines' times are read in (an owner on a phone travels; the host's zone is not theirs).
OWNER_SETTINGS_STEP = """
    CREATE TABLE owner_settings (
        -- who, written as a routine's owner is ("xmpp:owner@host", "matrix:@o:host")
        owner TEXT PRIMARY KEY,
        -- an IANA zone, checked when it is set; NULL: the configuration's [bot] timezone
        timezone TEXT,
        updated_at REAL NOT NULL
    );
"""

# The schema step that keeps why a routine is paused as a value, not only in words: the
# rows of the step before are read from the words their code wrote.
PAUSE_CAUSE_STEP = """
    ALTER TABLE routines ADD COLUMN pause_cause TEXT NOT NULL DEFAULT ''
        CHECK (pause_cause IN ('', 'owner', 'failures', 'budget', 'owner_gone'));
    UPDATE routines SET pause_cause = 'failures'
        WHERE state = 'paused' AND why LIKE 'its last % runs failed%';
    UPDATE routines SET pause_cause = 'budget'
        WHERE state = 'paused' AND why LIKE 'its cards spent %';
    UPDATE routines SET pause_cause = 'owner' WHERE state = 'paused' AND pause_cause = '';
    UPDATE routines SET pause_cause = 'owner_gone' WHERE state = 'stopped';
    CREATE INDEX routines_paused ON routines(state, pause_cause, updated_at);
"""

# The schema step (registered in migrations.py): routines and one row per occurrence.
SCHEMA = """
    CREATE TABLE routines (
        id INTEGER PRIMARY KEY,
        -- a [[routines]] entry's name, kept with the deployment; '' for one made in chat
        name TEXT NOT NULL DEFAULT '',
        source TEXT NOT NULL CHECK (source IN ('chat', 'config')),
        -- as the owner wrote it, and as read: cron fields (recurring) or one moment
        when_text TEXT NOT NULL,
        cron TEXT,
        at REAL,
        timezone TEXT NOT NULL,
        -- the command it runs, as typed (/start, /draft, /research, /inspect)
        command TEXT NOT NULL,
        -- who it runs as ("xmpp:owner@host"), and the room that hears it
        owner TEXT NOT NULL,
        transport TEXT NOT NULL,
        target TEXT NOT NULL,
        target_kind TEXT NOT NULL,
        catch_up TEXT NOT NULL DEFAULT 'once' CHECK (catch_up IN ('once', 'skip')),
        budget_usd REAL,
        state TEXT NOT NULL DEFAULT 'active'
            CHECK (state IN ('active', 'paused', 'stopped', 'done')),
        -- why it is paused or stopped, in words
        why TEXT NOT NULL DEFAULT '',
        -- the next occurrence nobody has decided yet
        next_at REAL,
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL
    );
    CREATE INDEX routines_due ON routines(state, next_at);
    CREATE TABLE routine_runs (
        id INTEGER PRIMARY KEY,
        routine_id INTEGER NOT NULL REFERENCES routines(id) ON DELETE CASCADE,
        due_at REAL NOT NULL,
        outcome TEXT NOT NULL,
        -- the card it started or named
        slug TEXT,
        detail TEXT NOT NULL DEFAULT '',
        -- 1: run at start for an occurrence missed while every bot was down
        late INTEGER NOT NULL DEFAULT 0 CHECK (late IN (0, 1)),
        claimed_at REAL NOT NULL,
        finished_at REAL,
        -- whoever inserts an occurrence first fires it; every other insert does nothing
        UNIQUE (routine_id, due_at)
    );
"""
