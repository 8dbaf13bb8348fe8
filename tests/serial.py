"""Which tests run one at a time on one xdist worker, and the scheduler that sends them.

The tiers that share one heavy thing run one test at a time on a worker of their own,
beside the fast tiers spread over the others (`scripts/test` runs `-n 4`): the real chat
servers' tests (and the multi-host bots) would otherwise start a Prosody and a Synapse per
worker and race each other's timeouts on two cores; the real CLIs' timeouts and watchdogs
are measured in wall time; one Chromium serves every browser test.

The rule reads the test's node id, not a mark: xdist's own `xdist_group` marks reach its
scheduler by rewriting `item._nodeid`, which pytest 9 no longer reads, so with them every
worker started its own servers. Groups are the largest units and go out first (xdist's
scope reordering), so the long serial chains start at once instead of after the fast tiers.
"""

from __future__ import annotations

import fnmatch
from typing import Any

#: A pattern of test modules (fnmatch) -> the group whose tests run one after another.
SERIAL_GROUPS = {
    "tests/integration/*": "chat-servers",
    "tests/multihost/*": "chat-servers",
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
