"""One table of job kinds: each record names the pipeline coroutine that runs it.

The worker has no table of its own (tests fail if `HANDLERS` comes back); every name
in the table leads to a coroutine function of chatbot.pipeline; a kind the table does
not know has no handler; and a role's runs take their role from the job, not from a
string of their own.
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

from chatbot.domain.roles import BY_NAME, DEPLOY, JOBS, ROLES
from chatbot.pipeline import worker
from chatbot.pipeline.jobs import handler_of

PIPELINE = Path(worker.__file__).parent


def test_every_job_kind_names_a_coroutine_of_the_pipeline() -> None:
    assert set(JOBS) == {role.name for role in ROLES} | {DEPLOY.name}
    for kind, job in JOBS.items():
        module, _, name = job.runs.partition(":")
        assert module.startswith("chatbot.pipeline."), job
        handler = handler_of(kind)
        assert handler is not None and handler.__name__ == name
        assert inspect.iscoroutinefunction(handler), job
    assert handler_of("no-such-kind") is None


def test_the_worker_keeps_no_table_of_its_own() -> None:
    tree = ast.parse(Path(worker.__file__).read_text(encoding="utf-8"))
    tables = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Dict)
        and any(isinstance(k, ast.Constant) and k.value in JOBS for k in node.keys)
    ]
    assert tables == []


def test_no_run_names_its_role_as_a_string() -> None:
    """`ctx.run(prompt, ...)` runs the job's own role: no handler passes a role name."""
    for path in sorted(PIPELINE.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("run", "profile")
                and any(isinstance(a, ast.Constant) and a.value in BY_NAME for a in node.args)
            ):
                raise AssertionError(f"{path.name}:{node.lineno} names a role in a call")


def test_a_kind_naming_no_coroutine_stops_the_workers_start(monkeypatch) -> None:
    import dataclasses

    import pytest

    from chatbot.domain import roles
    from chatbot.pipeline import jobs

    broken = dataclasses.replace(JOBS["deploy"], runs="chatbot.pipeline.deploying:run_deploi")
    monkeypatch.setitem(roles.JOBS, "deploy", broken)
    jobs.handler_of.cache_clear()
    try:
        with pytest.raises(jobs.JobTableError, match="run_deploi"):
            jobs.resolve_all()
    finally:
        monkeypatch.undo()
        jobs.handler_of.cache_clear()
    assert jobs.resolve_all()["deploy"].__name__ == "run_deploy"
