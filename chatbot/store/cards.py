"""Cards and their event history.

`transition` is the only way a card's phase changes: it checks the move against the
transition table inside the write transaction (so a concurrent writer cannot slip in
between the check and the write), updates the card and appends the event together.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypedDict, Unpack

from chatbot.domain.phases import DETOUR_PHASES, Kind, Phase
from chatbot.domain.transitions import (
    RUN_FAILURE,
    STAGE_KEEPING_ACTIONS,
    Action,
    By,
    Target,
    find,
    resolve,
)
from chatbot.store.card_data import CardData
from chatbot.store.db import Db, IntegrityError, Row

MAX_FAILURE_DETAIL = 240
_CONTROL_CHARS = re.compile(r"[\x00-\x1f\x7f-\x9f]+")


# Columns a transition (or the service) may set besides the phase.
class CardChanges(TypedDict, total=False):
    """The fields a move or an update may set, each with its type: a caller's keyword
    is checked where it is written. The phase is not among them (the table moves it)."""

    kind: Kind
    title: str
    slug: str
    lane: str | None
    runtime: str | None
    model: str | None
    reasoning_effort: str | None
    iteration_limit: int | None
    parent_id: int | None
    wave: int | None
    write_scope: list[str]
    acceptance_criteria: list[str]
    escalation: list[dict[str, Any]]
    escalation_step: int
    commit_hash: str | None
    review_decision: str | None
    review_report_path: str | None
    deployment_status: str | None
    failure_stage: str | None
    failure_detail: str | None
    resume_failure_stage: str | None
    resume_failure_detail: str | None
    pipeline_run_id: str | None
    source_path: str | None
    data: CardData
    fixer_attempts: int


UPDATABLE = CardChanges.__optional_keys__
_JSON_COLUMNS = frozenset({"write_scope", "acceptance_criteria", "escalation", "data"})


def clean_detail(text: str | None) -> str | None:
    """Failure text from a model or a crash: one line, no control characters, bounded."""
    if text is None:
        return None
    cleaned = _CONTROL_CHARS.sub(" ", str(text)).strip()
    return cleaned[:MAX_FAILURE_DETAIL]


@dataclass(frozen=True, slots=True)
class Card:
    id: int
    slug: str
    kind: Kind
    title: str
    phase: Phase
    resume_phase: Phase | None
    version: int
    lane: str | None = None
    runtime: str | None = None
    model: str | None = None
    reasoning_effort: str | None = None
    iteration_limit: int | None = None
    parent_id: int | None = None
    wave: int | None = None
    write_scope: list[str] = field(default_factory=list)
    acceptance_criteria: list[str] = field(default_factory=list)
    escalation: list[dict[str, Any]] = field(default_factory=list)
    escalation_step: int = 0
    commit_hash: str | None = None
    review_decision: str | None = None
    review_report_path: str | None = None
    deployment_status: str | None = None
    failure_stage: str | None = None
    failure_detail: str | None = None
    pipeline_run_id: str | None = None
    source_path: str | None = None
    data: CardData = field(default_factory=CardData)
    created_at: float = 0.0
    updated_at: float = 0.0
    # The failure the card carried when a run took it away from `resume_phase`.
    resume_failure_stage: str | None = None
    resume_failure_detail: str | None = None
    fixer_attempts: int = 0

    @classmethod
    def from_row(cls, row: Row | Mapping[str, Any]) -> Card:
        values = dict(row)
        for column in _JSON_COLUMNS:
            values[column] = json.loads(values[column])
        values["data"] = CardData.read(values["data"], values["slug"])
        values["kind"] = Kind(values["kind"])
        values["phase"] = Phase(values["phase"])
        if values["resume_phase"] is not None:
            values["resume_phase"] = Phase(values["resume_phase"])
        return cls(**values)


@dataclass(frozen=True, slots=True)
class Event:
    card_id: int
    seq: int
    from_phase: Phase | None
    to_phase: Phase
    action: str
    actor: str
    reason: str
    at: float

    @classmethod
    def from_row(cls, row: Row) -> Event:
        return cls(
            card_id=row["card_id"],
            seq=row["seq"],
            from_phase=Phase(row["from_phase"]) if row["from_phase"] else None,
            to_phase=Phase(row["to_phase"]),
            action=row["action"],
            actor=row["actor"],
            reason=row["reason"],
            at=row["at"],
        )


class UnknownCard(LookupError):
    def __init__(self, slug: str):
        super().__init__(f"no card '{slug}'")
        self.slug = slug


class SlugTaken(ValueError):
    def __init__(self, slug: str):
        super().__init__(f"a card '{slug}' exists already")
        self.slug = slug


def _encode(column: str, value: Any) -> Any:
    if column == "data":
        value = CardData.written(value).stored()
    if column in _JSON_COLUMNS:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    if column == "failure_detail":
        return clean_detail(value)
    if hasattr(value, "value"):  # enums
        return value.value
    return value


async def get(db: Db, slug: str) -> Card | None:
    row = await db.fetchone("SELECT * FROM cards WHERE slug = ?", (slug,))
    return Card.from_row(row) if row else None


async def get_by_id(db: Db, card_id: int) -> Card | None:
    row = await db.fetchone("SELECT * FROM cards WHERE id = ?", (card_id,))
    return Card.from_row(row) if row else None


async def require(db: Db, slug: str) -> Card:
    card = await get(db, slug)
    if card is None:
        raise UnknownCard(slug)
    return card


async def all_cards(db: Db) -> list[Card]:
    return [Card.from_row(r) for r in await db.fetchall("SELECT * FROM cards ORDER BY id")]


async def slugs(db: Db) -> list[str]:
    return [r[0] for r in await db.fetchall("SELECT slug FROM cards ORDER BY slug")]


async def in_pipeline(db: Db, pipeline: str) -> list[str]:
    rows = await db.fetchall(
        "SELECT slug FROM cards WHERE pipeline_run_id = ? ORDER BY id", (pipeline,)
    )
    return [r[0] for r in rows]


async def children(db: Db, card_id: int) -> list[Card]:
    rows = await db.fetchall("SELECT * FROM cards WHERE parent_id = ? ORDER BY id", (card_id,))
    return [Card.from_row(r) for r in rows]


async def blocked_by(db: Db, card_id: int) -> list[str]:
    rows = await db.fetchall(
        "SELECT c.slug FROM card_dependencies d JOIN cards c ON c.id = d.blocked_by_id "
        "WHERE d.card_id = ? ORDER BY c.slug",
        (card_id,),
    )
    return [r[0] for r in rows]


async def count_by_phase(db: Db) -> dict[Phase, int]:
    rows = await db.fetchall("SELECT phase, count(*) FROM cards GROUP BY phase")
    return {Phase(r[0]): r[1] for r in rows}


async def events(db: Db, card_id: int) -> list[Event]:
    rows = await db.fetchall("SELECT * FROM events WHERE card_id = ? ORDER BY seq", (card_id,))
    return [Event.from_row(r) for r in rows]


async def _append_event(
    db: Db,
    card_id: int,
    seq: int,
    from_phase: Phase | None,
    to_phase: Phase,
    action: str,
    actor: str,
    reason: str,
    now: float,
) -> None:
    await db.execute(
        "INSERT INTO events (card_id, seq, from_phase, to_phase, action, actor, reason, at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (card_id, seq, from_phase, to_phase, action, actor, clean_detail(reason) or "", now),
    )


async def create(
    db: Db,
    slug: str,
    kind: Kind,
    phase: Phase,
    *,
    actor: str,
    reason: str = "",
    action: str = "create",
    blocked_by_ids: tuple[int, ...] = (),
    **fields: Any,
) -> Card:
    """Insert a card and its first event (from nothing to `phase`)."""
    unknown = set(fields) - UPDATABLE
    if unknown:
        raise ValueError(f"unknown card fields: {sorted(unknown)}")
    now = time.time()
    columns = ["slug", "kind", "phase", "version", "created_at", "updated_at", *fields]
    values = [slug, kind.value, phase.value, 1, now, now]
    values += [_encode(c, v) for c, v in fields.items()]
    placeholders = ", ".join("?" * len(columns))
    try:
        card_id = await db.insert(
            f"INSERT INTO cards ({', '.join(columns)}) VALUES ({placeholders})", values
        )
    except IntegrityError as error:
        if error.about("cards.slug", "cards_slug_key"):
            raise SlugTaken(slug) from None
        raise
    for dependency in blocked_by_ids:
        await db.execute(
            "INSERT INTO card_dependencies (card_id, blocked_by_id) VALUES (?, ?)",
            (card_id, dependency),
        )
    await _append_event(db, card_id, 1, None, phase, action, actor, reason, now)
    card = await get_by_id(db, card_id)
    assert card is not None
    return card


async def transition(
    db: Db,
    slug: str,
    action: Action,
    /,
    *,
    actor: str,
    by: By,
    reason: str = "",
    **changes: Unpack[CardChanges],
) -> Card:
    """Move a card by `action` and append its event, inside the caller's transaction.

    Raises UnknownCard, or TransitionRefused naming the phase and what is allowed.
    """
    unknown = set(changes) - UPDATABLE
    if unknown:
        raise ValueError(f"unknown card fields: {sorted(unknown)}")
    card = await require(db, slug)
    target = resolve(
        slug,
        action,
        card.phase,
        card.kind,
        by=by,
        failure_stage=card.failure_stage,
        resume_phase=card.resume_phase,
    )
    now = time.time()
    assignments: dict[str, Any] = {
        "phase": target.value,
        "version": card.version + 1,
        "updated_at": now,
    }
    assignments.update(_resume_columns(card, action, target))
    if action in STAGE_KEEPING_ACTIONS and "failure_stage" not in changes:
        # Which run was interrupted decides whose session /steer continues.
        changes["failure_stage"] = RUN_FAILURE[card.phase].stage.value
    for column, value in changes.items():
        assignments[column] = _encode(column, value)
    sql = ", ".join(f"{column} = ?" for column in assignments)
    # The version guard turns any write that raced past the check into a no-op we detect.
    updated = await db.execute(
        f"UPDATE cards SET {sql} WHERE id = ? AND version = ?",
        [*assignments.values(), card.id, card.version],
    )
    if updated != 1:
        raise RuntimeError(f"card '{slug}' changed during its transition")
    await _append_event(
        db, card.id, card.version + 1, card.phase, target, action.value, actor, reason, now
    )
    if target is not card.phase:
        # A question belongs to the phase that asked it; whoever moves the card on
        # (an answer resolves it first) leaves nothing open behind.
        await db.execute(
            "UPDATE questions SET state = 'cancelled' WHERE card_id = ? AND state = 'open'",
            (card.id,),
        )
    fresh = await get_by_id(db, card.id)
    assert fresh is not None
    return fresh


def _resume_columns(card: Card, action: Action, target: Phase) -> dict[str, Any]:
    """Where the card returns to after a run that only looks at it or is cancelled, and
    which failure it carries.

    Entering a run from a resting phase remembers that phase and the failure the
    card carried; the waiting phases of an inspection or repair keep both, so a
    retried or answered inspection still returns to where the card was, failure
    and all (a failed card must stay retryable at its own stage).
    """
    row = find(action, card.phase, card.kind, card.failure_stage)
    if row is not None and row.target is Target.RESUME:
        return {
            "resume_phase": None,
            "resume_failure_stage": None,
            "resume_failure_detail": None,
            "failure_stage": card.resume_failure_stage,
            "failure_detail": card.resume_failure_detail,
        }
    resting = not card.phase.is_running and card.phase not in DETOUR_PHASES
    if resting and target.is_running:
        return {
            "resume_phase": card.phase.value,
            "resume_failure_stage": card.failure_stage,
            "resume_failure_detail": card.failure_detail,
        }
    if not target.is_running and target not in DETOUR_PHASES:
        # A resting phase starts clean; a failure is set by the move that records it.
        return {
            "resume_phase": None,
            "resume_failure_stage": None,
            "resume_failure_detail": None,
            "failure_stage": None,
            "failure_detail": None,
        }
    return {}


async def note(db: Db, card_id: int, action: str, actor: str, reason: str) -> None:
    """An event in the card's history that moves nothing (a steer, an approval answered)."""
    card = await get_by_id(db, card_id)
    if card is None:
        return
    now = time.time()
    await db.execute(
        "UPDATE cards SET version = version + 1, updated_at = ? WHERE id = ?", (now, card.id)
    )
    await _append_event(
        db, card.id, card.version + 1, card.phase, card.phase, action, actor, reason, now
    )


async def update(db: Db, slug: str, /, **changes: Unpack[CardChanges]) -> Card:
    """Change fields that are not the phase (no event: nothing moved on the board)."""
    unknown = set(changes) - UPDATABLE
    if unknown:
        raise ValueError(f"unknown card fields: {sorted(unknown)}")
    card = await require(db, slug)
    if changes:
        sql = ", ".join(f"{column} = ?" for column in changes)
        values = [_encode(c, v) for c, v in changes.items()]
        await db.execute(
            f"UPDATE cards SET {sql}, updated_at = ? WHERE id = ?", [*values, time.time(), card.id]
        )
    fresh = await get_by_id(db, card.id)
    assert fresh is not None
    return fresh


async def set_resume_phase(db: Db, card_id: int, phase: Phase) -> None:
    """Where a cancel of the card's run returns it to, set by a move that knows better
    than the phase it left (a comment stops a review: back to planning with feedback)."""
    await db.execute("UPDATE cards SET resume_phase = ? WHERE id = ?", (phase.value, card_id))
