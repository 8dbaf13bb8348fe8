"""Which tests run one at a time on one xdist worker, and the scheduler that sends them.

The tiers that share one heavy thing run one test at a time on a worker of their own,
beside the fast tiers spread over the others (`scripts/test` runs `-n 4`): the real chat
servers' tests (and the multi-host bots) run in two groups, each on a worker with its own
Prosody and Synapse, not on every worker racing each other's timeouts on two cores; the
real CLIs' timeouts and watchdogs are measured in wall time; one Chromium serves every
browser test.

The rule reads the test's node id, not a mark: xdist's own `xdist_group` marks reach its
scheduler by rewriting `item._nodeid`, which pytest 9 no longer reads, so with them every
worker started its own servers. Groups are the largest units and go out first (xdist's
scope reordering), so the long serial chains start at once instead of after the fast tiers.
"""

from __future__ import annotations

import fnmatch
from typing import Any

#: A pattern of test modules (fnmatch) -> the group whose tests run one after another;
#: the first pattern that matches decides.
SERIAL_GROUPS = {
    # The chat servers' tests are two groups, each on a worker with a Prosody and a
    # Synapse of its own: one chain of them was the suite's critical path (951 s of a
    # 1,002 s quiet run), most of it waiting on servers, bots and timeouts, not on a
    # core. The second group's modules add up to about half the chain's measured time.
    "tests/integration/test_talk_real.py": "chat-servers-2",
    "tests/integration/test_files_real.py": "chat-servers-2",
    "tests/integration/test_flood.py": "chat-servers-2",
    "tests/integration/test_catch_up.py": "chat-servers-2",
    "tests/integration/test_chat_clients.py": "chat-servers-2",
    "tests/integration/test_check_cli.py": "chat-servers-2",
    "tests/integration/test_long_messages.py": "chat-servers-2",
    "tests/integration/test_e2e_matrix.py": "chat-servers-2",
    "tests/multihost/*": "chat-servers-2",
    "tests/integration/*": "chat-servers",
    "tests/realcli/*": "agent-clis",
    # The modules that use the `chromium` fixture (tests/web/conftest.py); conftest.py
    # refuses a test that uses it elsewhere.
    "tests/web/test_*browser*.py": "chromium",
    "tests/web/test_demo_board.py": "chromium",
    "tests/web/test_narrow.py": "chromium",
    "tests/web/test_restart.py": "chromium",
}


def serial_group(nodeid: str) -> str | None:
    """The group a test runs in one at a time, or None where it may run anywhere."""
    module = nodeid.split("::", 1)[0]
    for pattern, group in SERIAL_GROUPS.items():
        if fnmatch.fnmatchcase(module, pattern):
            return group
    return None


def make_scheduler(config: Any, log: Any) -> Any:
    """xdist's scope scheduling with the groups above as the scopes, one test each else."""
    from xdist.scheduler import LoadScopeScheduling

    class TierScheduling(LoadScopeScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            return serial_group(nodeid) or nodeid

    return TierScheduling(config, log)
