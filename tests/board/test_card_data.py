"""A card's data as one typed model (issue 39 point 6): every key a field, writes
validated in full, reads of rows an older bot wrote forgiving, on both engines."""

from __future__ import annotations

import json
import logging
import typing

import pytest
from pydantic import ValidationError

from chatbot.domain.phases import Kind, Phase
from chatbot.store import Store
from chatbot.store import cards as card_store
from chatbot.store.card_data import CardData, DataChanges, Review

REVIEW: Review = {"commit": "a" * 40, "decision": "reject", "report": "Missing tests."}
EVERYTHING: dict[str, typing.Any] = {
    "reviews": [REVIEW],
    "answers": [{"kind": "fixer", "question": "Which?", "answer": "This one", "by": "xmpp:o"}],
    "conversation": [["owner", "a login page"], ["planner", "Which fields?"]],
    "origin": {"transport": "xmpp", "target_kind": "person", "target": "o@example.org"},
    "draft_slug": "draft-3",
    "inspection": {
        "schema_version": 1,
        "mode": "route_next",
        "outcome": "recommendation",
        "recommended_action": "planned",
        "basis": [{"source": "git log", "finding": "nothing built"}],
        "summary": "Start it.",
        "question": None,
        "required_action": None,
        "pending": False,
        "applied_by": "xmpp:o",
    },
    "inspect_mode": "route_next",
    "split_plan": [
        {
            "slug": "part-a",
            "title": "Part A",
            "intent_path": "docs/intent/part-a.md",
            "blocked_by": [],
            "fields": {"lane": "light", "data": {"auto_start": True}},
            "intent_markdown": "# Part A\n",
        }
    ],
    "auto_start": True,
    "operator_reason": "two parts",
    "budget_stop": {
        "scope": "card",
        "spent": 1.5,
        "limit": 1.0,
        "budget": 1.0,
        "allowances": 0,
        "key": "lanes.light.budget_usd_per_card",
        "role": "builder",
        "version": 4,
    },
    "budget_allowances": 2,
    "interrupted": {"session": "s-1", "runtime": "codex", "role": "builder"},
    "synthesis": {"path": "docs/review/big.md", "gaps": ["no index"]},
    "research_report": "docs/research/queues.md",
    "builder_report": "Built it.",
    "limit_reached": True,
    "fixer_rounds": 1,
    "checks": {
        "commit": "a" * 40,
        "command": ["make", "test"],
        "verdict": "failed",
        "duration_s": 3.1,
        "exit_code": 2,
        "tail": "FAILED",
    },
}


def test_every_field_goes_through_json_and_back_unchanged() -> None:
    assert set(EVERYTHING) == set(CardData.model_fields)  # the sample sets every field
    data = CardData.written(EVERYTHING)
    stored = json.loads(json.dumps(data.stored()))
    assert stored == EVERYTHING
    assert CardData.read(stored, "c") == data
    assert data.conversation[1] == ("planner", "Which fields?")  # a turn is a pair


def test_defaults_are_not_stored_and_an_empty_object_reads_as_them() -> None:
    assert CardData().stored() == {}
    read = CardData.read({}, "c")
    assert (read.reviews, read.checks, read.fixer_rounds, read.builder_report) == ([], None, 0, "")


def test_the_keywords_of_updated_are_the_fields_with_their_types() -> None:
    fields = {name: field.annotation for name, field in CardData.model_fields.items()}
    assert typing.get_type_hints(DataChanges) == fields


def test_updated_validates_and_keeps_the_rest() -> None:
    data = CardData(builder_report="first")
    more = data.updated(reviews=[REVIEW], fixer_rounds=2)
    assert (more.builder_report, more.fixer_rounds, more.reviews) == ("first", 2, [REVIEW])
    assert data.reviews == []  # the model is frozen: a copy changed
    with pytest.raises(ValidationError):
        data.updated(fixer_rounds="twice")  # type: ignore[typeddict-item]
    with pytest.raises(ValidationError):
        data.updated(reviews=[{"commit": "a"}])  # type: ignore[typeddict-item]
    with pytest.raises(ValidationError):
        data.fixer_rounds = 3  # type: ignore[misc]


def test_a_write_with_a_key_no_field_takes_is_refused() -> None:
    with pytest.raises(ValidationError, match="reviewz"):
        CardData.written({"reviewz": []})


def test_a_read_drops_an_unknown_key_and_defaults_a_wrong_shape_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    raw = {"legacy_flag": 1, "reviews": "not a list", "fixer_rounds": 2, "checks": {"x": 1}}
    with caplog.at_level(logging.WARNING, logger="chatbot.store.card_data"):
        read = CardData.read(raw, "old-card")
    assert (read.reviews, read.fixer_rounds) == ([], 2)
    assert read.checks == {"commit": "", "verdict": "unreadable"}  # holds a deploy
    said = caplog.text
    assert "card old-card: its data's legacy_flag is unknown, dropped" in said
    assert "card old-card: its data's reviews is of the wrong shape" in said
    assert "its data's checks is of the wrong shape" in said
    assert "fixer_rounds" not in said
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="chatbot.store.card_data"):
        CardData.read(raw, "old-card")
    assert caplog.text == ""  # once per card and key: pages read it again and again


def test_data_that_is_not_an_object_reads_as_the_defaults() -> None:
    assert CardData.read(["a list"], "odd-card") == CardData()


async def test_an_old_row_is_read_and_its_next_write_is_clean(store: Store) -> None:
    """A row an older bot wrote (a key since dropped, a value of another shape) neither
    stops a read nor survives the card's next write; a bad write is refused."""
    async with store.transaction() as db:
        made = await card_store.create(
            db, "old", Kind.INTENT, Phase.PLANNED, actor="t", title="Old", data={"fixer_rounds": 1}
        )
        old = {"gone_key": True, "reviews": {"commit": "x"}, "builder_report": "kept"}
        await db.execute("UPDATE cards SET data = ? WHERE id = ?", (json.dumps(old), made.id))
    card = await card_store.get(store.reader, "old")
    assert card is not None
    assert card.data == CardData(builder_report="kept")
    async with store.transaction() as db:
        await card_store.update(db, "old", data=card.data.updated(fixer_rounds=2))
        with pytest.raises(ValidationError):
            await card_store.update(db, "old", data={"fixer_rounds": "many"})
    row = await store.reader.fetchone("SELECT data FROM cards WHERE slug = 'old'")
    assert json.loads(row["data"]) == {"builder_report": "kept", "fixer_rounds": 2}


def test_a_checks_record_of_a_commit_and_a_verdict_alone_still_holds_a_deploy() -> None:
    """What decides a deploy must not read as "no checks" for want of the output's tail."""
    from chatbot.domain.checks import deploy_held

    read = CardData.read({"checks": {"commit": "a" * 40, "verdict": "failed"}}, "bare-checks")
    assert read.checks == {"commit": "a" * 40, "verdict": "failed"}
    assert deploy_held(read.checks, "a" * 40) == "failed in 0.0 s ()"


def test_unreadable_checks_hold_a_deploy_instead_of_reading_as_none_ran() -> None:
    read = CardData.read({"checks": "garbled"}, "garbled-checks")
    assert read.checks == {"commit": "", "verdict": "unreadable"}
    from chatbot.domain.checks import deploy_held

    assert deploy_held(read.checks, "a" * 40) == "did not run on it"
