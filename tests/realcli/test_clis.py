"""Every pinned agent CLI runs the real-CLI tests: each program the registry pins has a
module in tests/realcli/clis/ for a runtime that runs it, so a new runtime cannot be
registered without every role going through its real CLI in the suite."""

from __future__ import annotations

from runners.runtimes import RUNTIMES
from runners.runtimes.registry import clis
from tests.realcli.clis import CLIS


def test_every_pinned_cli_program_is_tested_through_a_runtime_of_its_own() -> None:
    tested = {RUNTIMES[name].cli.command for name in CLIS}
    assert tested == {cli.command for cli in clis()}
    # In the registry's order, so test ids and the heavy lane's pick are stable.
    assert list(CLIS) == [name for name in RUNTIMES if name in CLIS]
