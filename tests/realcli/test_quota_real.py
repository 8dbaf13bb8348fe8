"""A provider's spent quota or rate limit with the real CLIs: the loopback provider answers
429 as OpenAI's and Anthropic's APIs do, the real codex or Claude Code ends its run with
its own words for it, and the bot does not count the attempt: the job waits for the
reset and succeeds when the provider answers again; a lane's fallback runs it at once on
another runtime; the room is told once for two cards hit by the same outage."""

from __future__ import annotations

import re
from typing import Any

import pytest

from chatbot.board.run_events import ProviderLimited, RunEvent
from chatbot.domain.phases import Phase
from chatbot.domain.transitions import Action
from runners.runtimes import Limited
from tests.pipeline.harness import builder_answer
from tests.pipeline.room import open_room
from tests.realcli.harness import OWNER, direct, judge_the_commit_in_the_prompt, other
from tests.realcli.providers import Refuse, Say, Seen, Steps, WriteFile

# What the vendors' APIs answer when the quota or rate limit is spent (as recorded in
# tests/runners/data/quota/ by tests/realcli/capture_quota.py).
REFUSALS = {
    "codex": Refuse(
        {
            "error": {
                "message": "You exceeded your current quota, please check your plan and "
                "billing details.",
                "type": "insufficient_quota",
                "param": None,
                "code": "insufficient_quota",
            }
        }
    ),
    "claude": Refuse(
        {
            "type": "error",
            "error": {
                "type": "rate_limit_error",
                "message": "This request would exceed the rate limit for your organization "
                "of 30,000 input tokens per minute. Please try again later.",
            },
        },
        headers={"retry-after": "1"},
    ),
}
# Claude Code retries a 429 itself, up to ten times with back-off; the test's provider
# refuses every try, so one is enough. codex does not retry a spent quota.
NO_RETRIES = {"claude": {"CLAUDE_CODE_MAX_RETRIES": "0"}}
RETRY_S = 1.0
CARD_RE = re.compile(r"intent card\s+`([a-z0-9-]+)`")


class Watch:
    """Observes the worker: what the job and card looked like when a run was limited."""

    def __init__(self, rh: Any) -> None:
        self.rh = rh
        self.seen: list[dict[str, Any]] = []

    async def hear(self, event: RunEvent) -> None:
        if isinstance(event, ProviderLimited):
            await self.limited(event.card, event.runtime, event.limited, event.fell_back, event.at)

    async def limited(
        self, card, runtime: str, limited: Limited, fell_back: bool, at: float | None = None
    ) -> None:
        row = await self.rh.h.store.reader.fetchone(
            "SELECT state, not_before, attempts, error FROM jobs WHERE card_id = ? "
            "AND kind = 'builder' ORDER BY id DESC LIMIT 1",
            (card.id,),
        )
        fresh = await self.rh.h.board.reads.card(card.slug)
        self.seen.append(
            {
                "slug": card.slug,
                "runtime": runtime,
                "fell_back": fell_back,
                "at": at,
                "job": dict(row),
                "phase": fresh.phase,
                "limited": limited,
            }
        )


def builds(cli: str, refuse_first: bool = True, outage: frozenset[str] = frozenset()):
    """A model playing every role by the prompt; each card's first builder request is
    refused as the provider's API refuses a spent quota, and so is every builder request
    until each card in `outage` has been refused once (one outage for all of them)."""
    refused: set[str] = set()

    def respond(seen: Seen) -> Steps:
        if "OPERATOR-DECISION" in seen.prompt:
            return Say(direct(cli))
        if "REVIEW-RESULT" in seen.prompt:
            return judge_the_commit_in_the_prompt(seen)
        found = CARD_RE.search(seen.prompt)
        slug = found[1] if found else "unknown"
        if refuse_first and (slug not in refused or not outage <= refused):
            refused.add(slug)
            return REFUSALS[cli]
        if seen.tool_results:
            return Say(builder_answer(f"Write {slug}.py"))
        return WriteFile(f"{slug}.py", "VALUE = 1\n")

    return respond


async def outcome_rows(rh, purpose: str) -> list[str]:
    rows = await rh.h.store.reader.fetchall(
        "SELECT text FROM outbox WHERE purpose = ? ORDER BY id", (purpose,)
    )
    return [row[0] for row in rows]


@pytest.mark.parametrize("cli", ["codex", "claude"])
async def test_quota_error_waits_without_failing_and_succeeds_after_the_retry_time(
    pipeline, cli: str
) -> None:
    rh = await pipeline(
        cli,
        {"greeting": "# Greeting module\n\nAdd `greeting.py`.\n"},
        bot_config=f"quota_retry_s = {RETRY_S}\n",
        runtime_env=NO_RETRIES,
    )
    open_room(rh.h)
    watch = Watch(rh)
    rh.h.worker.observers.append(watch)
    rh.model.responder = builds(cli)
    await rh.h.board.act("greeting", Action.START, actor=OWNER)
    await rh.run_until_idle()

    # When the provider refused: the card kept its phase, the job waited in the queue
    # for the retry time, its attempt not counted.
    [limited] = watch.seen
    assert limited["runtime"] == cli and not limited["fell_back"]
    assert limited["phase"] is Phase.BUILDING
    job = limited["job"]
    assert job["state"] == "queued" and job["attempts"] == 0
    assert job["not_before"] == pytest.approx(limited["at"])
    assert "quota or rate limit" in job["error"]
    assert rh.model.refused == 1  # the CLI did not retry on its own
    # Then the provider answered again: the card went on and was reviewed.
    card = await rh.h.board.reads.card("greeting")
    assert card.phase is Phase.READY_FOR_DEPLOYMENT, (card.failure_stage, card.failure_detail)
    builders = [run for run in await rh.runs("greeting") if run.role == "builder"]
    assert [run.outcome == "ok" for run in builders] == [False, True]
    row = await rh.h.store.reader.fetchone(
        "SELECT attempts, state FROM jobs WHERE card_id = ? AND kind = 'builder'", (card.id,)
    )
    assert tuple(row) == (1, "done")
    [notice] = await outcome_rows(rh, "quota")
    assert f"{cli}: the provider's quota or rate limit is spent" in notice


async def test_two_cards_in_one_outage_tell_the_room_once(pipeline) -> None:
    rh = await pipeline(
        "codex",
        {
            "alpha": "# Alpha\n\nAdd `alpha.py`.\n",
            "beta": "# Beta\n\nAdd `beta.py`.\n",
        },
        bot_config=f"quota_retry_s = {RETRY_S}\n",
    )
    open_room(rh.h)
    watch = Watch(rh)
    rh.h.worker.observers.append(watch)
    # Neither card's builder gets an answer before both were refused: however the two
    # cards' runs interleave, one outage hit them both.
    rh.model.responder = builds("codex", outage=frozenset({"alpha", "beta"}))
    await rh.h.board.act("alpha", Action.START, actor=OWNER)
    await rh.h.board.act("beta", Action.START, actor=OWNER)
    await rh.run_until_idle()

    assert {seen["slug"] for seen in watch.seen} == {"alpha", "beta"}  # both were limited ...
    assert len(await outcome_rows(rh, "quota")) == 1  # ... and the room heard it once
    for slug in ("alpha", "beta"):
        card = await rh.h.board.reads.card(slug)
        assert card.phase is Phase.READY_FOR_DEPLOYMENT, (card.failure_stage, card.failure_detail)


async def test_a_lane_fallback_runs_the_builder_at_once_on_the_other_runtime(pipeline) -> None:
    fallback_cli = other("codex")
    rh = await pipeline(
        "codex",
        {"greeting": "# Greeting module\n\nAdd `greeting.py`.\n"},
        bot_config="quota_retry_s = 3600\n",  # a wait would not end within the test
        light_config='fallback = "heavy"\n',
        runtime_env=NO_RETRIES,
    )
    open_room(rh.h)
    watch = Watch(rh)
    rh.h.worker.observers.append(watch)
    rh.model.responder = builds("codex")
    rh.models[fallback_cli].responder = builds(fallback_cli, refuse_first=False)
    await rh.h.board.act("greeting", Action.START, actor=OWNER)
    await rh.run_until_idle()

    card = await rh.h.board.reads.card("greeting")
    assert card.phase is Phase.READY_FOR_DEPLOYMENT, (card.failure_stage, card.failure_detail)
    builders = [run for run in await rh.runs("greeting") if run.role == "builder"]
    assert [(run.runtime, run.outcome == "ok") for run in builders] == [
        ("codex", False),
        (fallback_cli, True),
    ]
    [limited] = watch.seen
    assert limited["fell_back"] and limited["job"]["state"] == "running"
    row = await rh.h.store.reader.fetchone(
        "SELECT not_before FROM jobs WHERE card_id = ? AND kind = 'builder'", (card.id,)
    )
    assert row[0] is None  # it never waited
    [notice] = await outcome_rows(rh, "quota")
    assert "fallback lane" in notice
