"""A read-only role whose prompt tells it to run git commands is granted the git reads.

Codex's read-only sandbox and Claude Code's own read-only check run such commands
anyway; a CLI whose read-only mode runs no command at all (Gemini CLI in a headless
run) runs only what a role is granted, so a prompt asking for git without the grant
would ask for what that CLI refuses. Read from the templates, not from a list.
"""

from __future__ import annotations

import re

from chatbot.domain.roles import ROLES
from runners import prompts
from runners.runtimes.base import Grant

ASKS_FOR_GIT = re.compile(r"`git (show|diff|log|grep)\b|\bgit commands\b", re.IGNORECASE)


def test_a_read_only_role_asked_to_run_git_is_granted_the_git_reads() -> None:
    asked = {
        role.name
        for role in ROLES
        if not role.writes
        and any(ASKS_FOR_GIT.search(prompts.template_text(name)) for name in role.templates)
    }
    granted = {role.name for role in ROLES if Grant.GIT_READS in role.grants}
    assert asked >= {"reviewer", "synthesis"}  # the check reads what it should
    assert asked <= granted, sorted(asked - granted)
