"""The reviewer on each real CLI (issue 16): it runs exactly the git commands a review
needs (`git show`, `git diff`, `git log`, `git grep`: granted in the CLI's own syntax
where its read-only mode would refuse them), and nothing that writes gets through: not a
commit, not a tag, not a redirection, not `git diff --output=FILE`, which a bare grant
would let write (shown on Claude Code)."""

from __future__ import annotations

import re
from pathlib import Path

from chatbot.domain.phases import Phase
from chatbot.domain.roles import BY_NAME
from chatbot.domain.transitions import Action
from runners.process import ProcessLimits
from runners.runtimes import claude, run_model
from tests.pipeline.harness import builder_answer, git, make_repo
from tests.realcli.clis import CLIS
from tests.realcli.harness import (
    OWNER,
    child_env,
    direct,
    judge_the_commit_in_the_prompt,
    run_request,
)
from tests.realcli.providers import Say, Seen, Shell, WriteFile

LIMITS = ProcessLimits(timeout=90, idle_timeout=90, kill_grace=1.0)
INTENT = "# Greeting\n\nAdd `greet.py` with a `greet()` function.\n"
DENIED = "denied"


def commit_of(seen: Seen) -> str:
    found = re.search(r"\b[0-9a-f]{40}\b", seen.prompt)
    assert found, "the reviewer's prompt names no commit"
    return found[0]


def run(command: str):
    """A reviewer turn running `command` with {c} the commit under review."""
    return lambda seen: Shell(command.format(c=commit_of(seen)))


READS = [
    "git show --stat {c}",
    # A CLI may hand its shell a git configuration with diff.external emptied (Gemini CLI
    # does); git then fails to run "" for a patch unless told to use its own diff.
    "git diff --no-ext-diff {c}~1 {c}",
    "git grep -F greet {c}",
    "git log -1 --format=%H {c}",
]
WRITES = [
    "git diff --output=../leak.txt {c}~1 {c}",
    "git commit --allow-empty -m sneaky",
    "git tag sneaky {c}",
    "git show {c} > ../shown.txt",
]


async def test_the_reviewer_reads_the_commit_and_writes_nothing(pipeline, cli) -> None:
    rh = await pipeline(cli, {"greeting": INTENT})
    rh.model.script(
        Say(direct(cli)),
        WriteFile("greet.py", "def greet():\n    return 'hi'\n"),
        Say(builder_answer("Add greet()")),
        *(run(command) for command in READS + WRITES),
        judge_the_commit_in_the_prompt,
    )
    await rh.h.board.act("greeting", Action.START, actor=OWNER)
    await rh.run_until_idle()

    card = await rh.h.board.reads.card("greeting")
    assert card.phase is Phase.READY_FOR_DEPLOYMENT, (card.failure_stage, card.failure_detail)
    commit = card.commit_hash
    results = rh.model.seen[-1].tool_results[-len(READS + WRITES) :]
    show, diff, grep, log, *refused = results
    assert "greet.py" in show and commit in show
    assert "+def greet():" in diff
    assert f"{commit}:greet.py:def greet():" in grep
    assert commit in log
    for command, text in zip(WRITES, refused, strict=True):
        assert any(said in text for said in CLIS[cli].refused_with_grants), (command, text)
    worktree = rh.h.config.bot.workspaces / "greeting"
    assert not (worktree.parent / "leak.txt").exists()
    assert not (worktree.parent / "shown.txt").exists()
    assert git(rh.h.repo, "tag") == ""
    assert git(rh.h.repo, "rev-parse", "card/greeting") == commit


async def test_a_bare_git_grant_would_let_writes_through(
    cli_bins, messages_model, tmp_path: Path
) -> None:
    """Why the reviewer's grants come with `--output` denied, and why it never gets the
    reference's `Bash(git *)`: measured on the real CLI, each would write."""
    repo = make_repo(tmp_path, {"greeting": INTENT})
    (repo / "greet.py").write_text("def greet():\n    return 'hi'\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "Add greet()")
    head = git(repo, "rev-parse", "HEAD")
    env = child_env(tmp_path / "home")

    async def attempt(command: str, tools: tuple[str, ...]) -> str:
        messages_model.script(Shell(command), Say("done"))
        request = run_request(
            "claude", cli_bins, messages_model, tmp_path, repo, "Review.", allowed_tools=tools
        )
        result = await run_model("claude", request, limits=LIMITS, base_env=env)
        assert result.ok, result.failure
        return messages_model.seen[-1].tool_results[-1]

    leak = tmp_path / "leak.txt"
    output = f"git diff --output={leak} HEAD~1 HEAD"
    # The reviewer's grants as the bot passes them: --output is denied.
    assert DENIED in await attempt(output, claude.REVIEW_GIT_TOOLS)
    assert not leak.exists()
    # The same grants without that denial: the file is written.
    original = claude.GRANTED_GIT_WRITES
    claude.GRANTED_GIT_WRITES = ()
    try:
        assert DENIED not in await attempt(output, claude.REVIEW_GIT_TOOLS)
    finally:
        claude.GRANTED_GIT_WRITES = original
    assert "+def greet" in leak.read_text()
    # The reviewer's grants refuse a commit; the reference's `Bash(git *)` makes one.
    assert DENIED in await attempt("git commit --allow-empty -m a", claude.REVIEW_GIT_TOOLS)
    assert git(repo, "rev-parse", "HEAD") == head
    await attempt("git commit --allow-empty -m b", ("Bash(git *)",))
    assert git(repo, "rev-parse", "HEAD") != head
    # The grants are the role table's (the reviewer's git reads), in Claude Code's syntax.
    assert claude.RUNTIME.tool_rules(BY_NAME["reviewer"].grants) == claude.REVIEW_GIT_TOOLS
