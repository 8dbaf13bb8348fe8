"""What the fake CLIs answer in the stateful test: one scenario turn per run outcome.

Each role has valid answers (its "ok" variants) and a contract-breaking one; every
role can also exit 1 or hang until the no-output watchdog stops it. Slugs a run
creates (split children, a draft's intent) are numbered, so a later run never
collides with an earlier one unless it means to.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from tests.pipeline.harness import builder_answer, child, direct, operator_answer, review_answer

# Failures every role can have; "ok:*" outcomes are the role's valid answers.
FAILURES = ("rejected", "exit1", "timeout")
# The watchdog needs seconds per hang: hangs are drawn rarely (see `outcomes`).
SLOW = frozenset({"timeout", "ok:limit"})

_OK: dict[str, tuple[str, ...]] = {
    "operator": ("ok:direct", "ok:ladder", "ok:needs_human", "ok:split"),
    "builder": ("ok:commit", "ok:limit"),
    "reviewer": ("ok:approve", "ok:reject"),
    "split": ("ok:split",),
    "draft": ("ok:question", "ok:intent"),
    "researcher": ("ok:report",),
    "inspector_status": ("ok:status", "ok:asks"),
    "inspector_route": ("ok:route", "ok:route_archive", "ok:route_asks", "ok:no_action"),
    "fixer": ("ok:commit", "ok:question"),
    "deploy": ("ok:deployed",),
}

_REJECTED: dict[str, str] = {
    "operator": '===OPERATOR-DECISION===\n{"schema_version": 1, "decision": \n'
    "===END-OPERATOR-DECISION===",
    "builder": "===COMMIT-MESSAGE===\nhalf a commit message and no end marker",
    "reviewer": review_answer("approve").replace("{{HEAD}}", "0" * 40),
    "split": "===SPLIT-REPORT===\nNo children at all.\n===END-SPLIT-REPORT===",
    "draft": "===DRAFT-QUESTION===\nWhich?\n===END-DRAFT-QUESTION===\n"
    "===DRAFT-INTENT===\nslug: both-blocks\n---\n# Both\n===END-DRAFT-INTENT===",
    "researcher": "Here is what I found, without the report block.",
    "inspector_status": "===INSPECTION_RESULT===\n{}\n===END_INSPECTION_RESULT===",
    "inspector_route": "===ROUTING_RESULT===\n{}\n===END_ROUTING_RESULT===",
    "fixer": "===FIXER-QUESTION===\nKeep it?\n===END-FIXER-QUESTION===\n"
    "===COMMIT-MESSAGE===\nFix\n===END-COMMIT-MESSAGE===",
}


def outcomes(role: str) -> list[str]:
    """The outcomes to draw from for one run, weighted by repetition: mostly the answer
    that moves the card on (so deep phases are reached), hangs rarely (they cost time)."""
    happy, *others = _OK[role]
    fast = [o for o in others if o not in SLOW]
    slow = [o for o in others if o in SLOW]
    if role == "deploy":
        return [happy] * 3 + ["exit1"]
    common = [happy] * 6 + fast * 2 + ["rejected", "rejected", "exit1", "exit1"]
    return common * 2 + slow + ["timeout"]


class Answers:
    def __init__(self) -> None:
        self._numbers = itertools.count(1)

    def turn(self, role: str, outcome: str) -> dict[str, Any]:
        """One fake-CLI turn (no `match`: each scenario holds the turns of one run)."""
        if outcome == "exit1":
            return {"answer": "crashed", "exit_code": 1, "stderr": "agent crashed"}
        if outcome == "timeout":
            return {"answer": "never said", "hang": "before_output"}
        if outcome == "rejected":
            return {"answer": _REJECTED[role]}
        return getattr(self, "_" + role)(outcome.removeprefix("ok:"))

    def _slug(self, stem: str) -> str:
        return f"{stem}-{next(self._numbers)}"

    def _commit(self) -> dict[str, Any]:
        n = next(self._numbers)
        return {"answer": builder_answer(f"Change {n}"), "files": {f"src/change-{n}.txt": f"{n}\n"}}

    def _operator(self, variant: str) -> dict[str, Any]:
        if variant == "direct":
            return {"answer": direct("light")}
        if variant == "ladder":
            step = {"model": "gpt-5-codex", "reasoning_effort": "high", "iteration_limit": 5}
            return {"answer": direct("light", [step])}
        if variant == "needs_human":
            ask = "Which storage?\noptions: S3 | local disk"
            decision = {"decision": "needs_human", "reason": "unclear", "human_action": ask}
            return {"answer": operator_answer(decision)}
        first, second = self._slug("part"), self._slug("part")
        children = [child(first, 1, []), child(second, 2, [first])]
        return {"answer": operator_answer({"decision": "split", "children": children})}

    def _builder(self, variant: str) -> dict[str, Any]:
        if variant == "limit":
            # Talks but never finishes: every turn up to the iteration limit.
            return {"answer": "Still working on it.", "repeat": True}
        return self._commit()

    def _reviewer(self, variant: str) -> dict[str, Any]:
        return {"answer": review_answer("approve" if variant == "approve" else "reject")}

    def _split(self, _variant: str) -> dict[str, Any]:
        blocks = "\n".join(
            f"===CHILD===\nslug: {slug}\n---\n# {slug}\n\nOne part.\n===END-CHILD==="
            for slug in (self._slug("piece"), self._slug("piece"))
        )
        return {"answer": f"===SPLIT-REPORT===\nTwo parts.\n{blocks}\n===END-SPLIT-REPORT==="}

    def _draft(self, variant: str) -> dict[str, Any]:
        if variant == "question":
            return {
                "answer": "===DRAFT-QUESTION===\nWhich format?\noptions: CSV | PDF | both\n"
                "===END-DRAFT-QUESTION==="
            }
        slug = self._slug("drafted")
        return {
            "answer": f"===DRAFT-INTENT===\nslug: {slug}\n---\n# {slug}\n\nGoal.\n"
            "===END-DRAFT-INTENT==="
        }

    def _researcher(self, _variant: str) -> dict[str, Any]:
        return {
            "answer": "===RESEARCH-REPORT===\n# Findings\n\nUse SQLite.\n===END-RESEARCH-REPORT==="
        }

    def _inspector_status(self, variant: str) -> dict[str, Any]:
        found = {
            "schema_version": 1,
            "mode": "implementation_status",
            "repository_status": "missing",
            "deployment_status": "unknown",
            "checked_revision": None,
            "repository_evidence": [{"source": "ls", "finding": "nothing yet"}],
            "deployment_evidence": [],
            "summary": "Not built yet.",
            "question": "Is the old module still used?" if variant == "asks" else None,
            "required_action": None,
        }
        return {
            "answer": f"===INSPECTION_RESULT===\n{json.dumps(found)}\n===END_INSPECTION_RESULT==="
        }

    def _inspector_route(self, variant: str) -> dict[str, Any]:
        found: dict[str, Any] = {
            "schema_version": 1,
            "mode": "route_next",
            "outcome": "recommendation",
            "recommended_action": "archived" if variant == "route_archive" else "planned",
            "basis": [{"source": "board", "finding": "nothing runs"}],
            "summary": "Move it on.",
            "question": None,
            "required_action": None,
        }
        if variant == "route_asks":
            found |= {
                "outcome": "needs_input",
                "recommended_action": None,
                "question": "Should it be split?",
                "required_action": "decide",
            }
        elif variant == "no_action":
            found |= {"outcome": "no_action", "recommended_action": None}
        return {"answer": f"===ROUTING_RESULT===\n{json.dumps(found)}\n===END_ROUTING_RESULT==="}

    def _fixer(self, variant: str) -> dict[str, Any]:
        if variant == "question":
            return {
                "answer": "===FIXER-QUESTION===\nKeep the old API?\noptions: yes | no\n"
                "===END-FIXER-QUESTION==="
            }
        return self._commit()
