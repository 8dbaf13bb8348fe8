"""The repository's checks as a gate (issue 37 point 2), through the real worker and the
scripted stand-ins: a commit that fails the checks goes back to its builder with the end
of their output, a passing one is reviewed with their result, one that never passes
fails the card with its ways on, and /deploy holds a commit whose checks did not pass."""

from __future__ import annotations

import pytest

from chatbot.app.views import card_json
from chatbot.board.errors import BoardError
from chatbot.chat.render import checks_line
from chatbot.chat.render import ways_forward as chat_ways
from chatbot.domain.phases import Phase
from chatbot.domain.transitions import Action
from chatbot.domain.ways import ways_forward
from chatbot.web.metrics import Metrics
from tests.pipeline.harness import builder_answer, direct, review_answer, start
from tests.pipeline.support import OWNER, kill_strays, run_idle

INTENT = "# Greeting module\n\nAdd `greet.py` and `ok.txt`.\n"
# Fails, printing a marker of its own, until the worktree has ok.txt.
CHECKS = """
[checks]
command = ["sh", "-c", 'echo checking; test -f ok.txt || {{ echo "FAILED: ok.txt is missing ({tag}) at $(git rev-parse HEAD)" >&2; exit 3; }}']
timeout_s = 20
tail_chars = 500
"""
AGAIN = "The end of their output"
DEPLOY = '\n[deploy]\ncommand = ["true"]\n'


@pytest.fixture(autouse=True)
def _no_strays(harnesses):
    yield
    for h in list(harnesses):
        kill_strays(h)


def _builder(subject: str, files: dict[str, str], match: str = "COMMIT-MESSAGE") -> dict:
    return {"match": match, "cli": "codex", "answer": builder_answer(subject), "files": files}


async def test_a_failing_commit_goes_back_with_its_tail_and_passes_on_the_second(
    tmp_path, monkeypatch, harnesses
) -> None:
    turns = [
        {"match": "OPERATOR-DECISION", "answer": direct("light")},
        # The second iteration: only the checks' failure prompt says this.
        _builder("Add ok.txt", {"ok.txt": "ok\n"}, match=AGAIN),
        _builder("Add greet()", {"greet.py": "def greet():\n    return 'hi'\n"}),
        {"match": "REVIEW-RESULT", "cli": "claude", "answer": review_answer(), "repeat": True},
    ]
    h = await start(
        tmp_path,
        turns,
        {"greeting": INTENT},
        extra_config=CHECKS.format(tag="t1") + DEPLOY,
        monkeypatch=monkeypatch,
    )
    harnesses.append(h)
    metrics = Metrics(h.board)
    h.worker.observers.append(metrics)
    await h.board.act("greeting", Action.START, actor=OWNER)
    await run_idle(h)

    card = await h.board.reads.card("greeting")
    # The commit passed, was reviewed and deployed (the checks passed on it).
    assert card.phase is Phase.DEPLOYED, card.failure_detail
    [again] = h.prompts_of(AGAIN)
    assert "FAILED: ok.txt is missing (t1)" in again and "checking" in again
    record = card.data.checks
    assert record["commit"] == card.commit_hash and record["verdict"] == "passed"
    assert record["tail"] == "checking" and record["duration_s"] < 20
    [review] = h.prompts_of("REVIEW-RESULT")
    checks_part = review.split("The repository's checks on this commit", 1)[1]
    assert "passed in" in checks_part.split("## The owner's line comments")[0]
    # /status, `card --json` and /metrics say so too.
    [status] = checks_line(card, "en")
    assert status.startswith("checks: passed in") and "checking" in status
    shown = card_json(card, parent=None, children=[], blocked_by=[], events=[])["checks"]
    assert shown == record
    exposition, _ = await metrics.exposition()
    for verdict in ("failed", "passed"):
        line = f'intentboard_checks_duration_seconds_count{{verdict="{verdict}"}} 1.0'
        assert line in exposition.decode()
    # The second iteration resumed the builder's session: one of its limit of 5.
    builder_runs = [c for c in h.calls() if "COMMIT-MESSAGE" in c.get("stdin", "")]
    assert len(builder_runs) == 2


async def test_a_commit_that_never_passes_fails_the_card_with_its_ways_on(
    tmp_path, monkeypatch, harnesses
) -> None:
    turns = [
        {"match": "OPERATOR-DECISION", "answer": direct("light")},
        # Each iteration must change a file to commit: it writes the failed commit's hash.
        _builder("Try again", {"greet.py": "# after {{sha}}\n"}, match=AGAIN)
        | {"repeat": True, "capture": "at (?P<sha>[0-9a-f]{40})"},
        _builder("Add greet()", {"greet.py": "def greet():\n    return 'hi'\n"}),
        {"match": "REVIEW-RESULT", "cli": "claude", "answer": review_answer(), "repeat": True},
        # /retry --skip-checks: a fresh builder session.
        _builder("Add it unchecked", {"late.py": "z = 3\n"}),
    ]
    h = await start(
        tmp_path,
        turns,
        {"greeting": INTENT},
        extra_config=CHECKS.format(tag="t2") + DEPLOY,
        monkeypatch=monkeypatch,
    )
    harnesses.append(h)
    await h.board.act("greeting", Action.START, actor=OWNER)
    await run_idle(h)

    card = await h.board.reads.card("greeting")
    assert card.phase is Phase.FAILED and card.failure_stage == "checks"
    assert "--skip-checks" in (card.failure_detail or "")
    assert card.data.checks["verdict"] == "failed"
    assert card.data.checks["commit"] == card.commit_hash
    assert len(h.prompts_of("COMMIT-MESSAGE")) == 5  # the lane's limit: 5 iterations in all
    assert ways_forward(card.phase, card.failure_stage) == (Action.RETRY, Action.FIX)
    said = [command for _, command, _ in chat_ways(card, "en")]
    assert said == ["/retry greeting [--skip-checks]", "/fix greeting"]  # /status, card --json
    assert not h.prompts_of("REVIEW-RESULT")

    # Skipping the checks once: the builder's next commit goes to review unchecked,
    # and the review's approval does not deploy it on its own.
    await h.board.act("greeting", Action.RETRY, actor=OWNER, payload={"skip_checks": True})
    await run_idle(h)
    card = await h.board.reads.card("greeting")
    assert card.phase is Phase.READY_FOR_DEPLOYMENT, card.failure_detail
    assert card.data.checks["verdict"] == "skipped"
    # The fresh session of the /retry was told what still failed on the commit it builds on.
    retry_prompt = h.prompts_of("COMMIT-MESSAGE")[-1]
    assert "The repository's checks failed on the last commit" in retry_prompt
    assert "FAILED: ok.txt is missing (t2)" in retry_prompt
    assert "skipped" in h.prompts_of("REVIEW-RESULT")[-1]
    assert card.deployment_status == "pending"

    with pytest.raises(BoardError, match="did not pass.*--skip-checks"):
        await h.board.act("greeting", Action.DEPLOY, actor=OWNER)
    await h.board.act("greeting", Action.DEPLOY, actor=OWNER, payload={"skip_checks": True})
    await run_idle(h)
    assert (await h.board.reads.card("greeting")).phase is Phase.DEPLOYED


async def test_a_checks_line_in_the_intent_overrides_the_config(
    tmp_path, monkeypatch, harnesses
) -> None:
    turns = [
        {"match": "OPERATOR-DECISION", "answer": direct("light"), "repeat": True},
        _builder("Add greet()", {"greet.py": "x = 1\n"}),
        _builder("Add more", {"more.py": "y = 2\n"}),
        {"match": "REVIEW-RESULT", "cli": "claude", "answer": review_answer(), "repeat": True},
    ]
    intents = {
        # "none": no checks at all for this card, whatever the configuration says.
        "unchecked": INTENT + "\nChecks: none\n",
        # Its own command, which passes without ok.txt.
        "own": INTENT + '\nChecks: sh -c "echo own checks"\n',
    }
    h = await start(
        tmp_path,
        turns,
        intents,
        extra_config=CHECKS.format(tag="t3"),
        monkeypatch=monkeypatch,
    )
    harnesses.append(h)
    await h.board.act("unchecked", Action.START, actor=OWNER)
    await run_idle(h)
    await h.board.act("own", Action.START, actor=OWNER)
    await run_idle(h)

    unchecked = await h.board.reads.card("unchecked")
    assert unchecked.phase is Phase.READY_FOR_DEPLOYMENT, unchecked.failure_detail
    assert "checks" not in unchecked.data
    own = await h.board.reads.card("own")
    assert own.phase is Phase.READY_FOR_DEPLOYMENT, own.failure_detail
    assert own.data.checks["command"] == ["sh", "-c", "echo own checks"]
    assert own.data.checks["tail"] == "own checks"
    assert not h.prompts_of(AGAIN)


async def test_a_fixers_commit_is_held_to_the_checks_too(tmp_path, monkeypatch, harnesses) -> None:
    # /fix on a planned card: the fixer builds what the intent asks (one session).
    turns = [
        _builder("Add ok.txt", {"ok.txt": "ok\n"}, match=AGAIN),
        _builder("Add greet()", {"greet.py": "x = 1\n"}, match="FIXER-QUESTION"),
        {"match": "REVIEW-RESULT", "cli": "claude", "answer": review_answer(), "repeat": True},
    ]
    h = await start(
        tmp_path,
        turns,
        {"greeting": INTENT},
        extra_config=CHECKS.format(tag="t4"),
        monkeypatch=monkeypatch,
    )
    harnesses.append(h)
    await h.board.act("greeting", Action.FIX, actor=OWNER)
    await run_idle(h)

    card = await h.board.reads.card("greeting")
    assert card.phase is Phase.READY_FOR_DEPLOYMENT, card.failure_detail
    [again] = h.prompts_of(AGAIN)
    assert "FAILED: ok.txt is missing (t4)" in again
    assert card.data.checks["verdict"] == "passed"
    assert "passed in" in h.prompts_of("REVIEW-RESULT")[-1]
