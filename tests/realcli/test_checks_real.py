"""The repository's checks as a gate with the real codex (issue 37, Must show): its
commit fails the checks, the end of their output reaches the model provider in codex's
next request (the same session, resumed), the second commit passes, and Claude Code
reviews it with the checks' result in its prompt."""

from __future__ import annotations

from chatbot.domain.phases import Phase
from chatbot.domain.transitions import Action
from tests.pipeline.harness import builder_answer
from tests.realcli.harness import OWNER, direct, judge_the_commit_in_the_prompt
from tests.realcli.providers import Say, Seen, Steps, WriteFile

CHECKS = """
[checks]
command = ["sh", "-c", 'test -f ok.txt || { echo "FAILED: ok.txt is missing, checked in $PWD" >&2; exit 3; }']
timeout_s = 60
"""


async def test_the_failure_tail_reaches_codexs_next_request(pipeline) -> None:
    rh = await pipeline(
        "codex",
        {"greeting": "# Greeting module\n\nAdd `greet.py` and `ok.txt`.\n"},
        role_runtimes={"reviewer": "claude"},
        extra_config=CHECKS,
    )
    codex, claude = rh.models["codex"], rh.models["claude"]
    told: list[Seen] = []

    def fix_what_the_checks_said(seen: Seen) -> Steps:
        told.append(seen)
        return WriteFile("ok.txt", "ok\n")

    codex.script(
        Say(direct("codex")),
        WriteFile("greet.py", "def greet():\n    return 'hi'\n"),
        Say(builder_answer("Add greet()")),
        fix_what_the_checks_said,
        Say(builder_answer("Add ok.txt")),
    )
    claude.script(judge_the_commit_in_the_prompt)
    await rh.h.board.act("greeting", Action.START, actor=OWNER)
    await rh.run_until_idle()

    card = await rh.h.board.reads.card("greeting")
    assert card.phase is Phase.READY_FOR_DEPLOYMENT, (card.failure_stage, card.failure_detail)
    [seen] = told
    assert "FAILED: ok.txt is missing, checked in" in seen.prompt
    assert "The end of their output" in seen.prompt
    # One session: the first builder request and the one after the checks share it.
    builder = [s for s in codex.seen if "OPERATOR-DECISION" not in s.prompt]
    assert builder[0].session and builder[0].session == seen.session
    assert card.data.checks["verdict"] == "passed"
    assert card.data.checks["commit"] == card.commit_hash
    [review] = claude.seen
    assert "The repository's checks on this commit" in review.prompt
    assert "passed in" in review.prompt
    assert not codex.problems and not claude.problems
