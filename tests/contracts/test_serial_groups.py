"""The serial tiers' rule (tests/serial.py) names real places. A test that takes the
`chromium` fixture outside its group stops the collection (tests/conftest.py)."""

from __future__ import annotations

from pathlib import Path

from tests.serial import SERIAL_GROUPS, serial_group

ROOT = Path(__file__).resolve().parents[2]


def test_each_pattern_names_test_modules_that_exist() -> None:
    for pattern in SERIAL_GROUPS:
        assert list(ROOT.glob(pattern.replace("/*", "/test_*.py"))), pattern


def test_each_pattern_decides_for_some_module() -> None:
    # A pattern behind a wider one that matches the same modules would never decide.
    for pattern, group in SERIAL_GROUPS.items():
        modules = ROOT.glob(pattern.replace("/*", "/test_*.py"))
        decided = [m for m in modules if serial_group(str(m.relative_to(ROOT))) == group]
        assert decided, f"{pattern} is shadowed by an earlier pattern"


def test_the_groups_of_a_few_tests() -> None:
    assert serial_group("tests/integration/test_xmpp.py::test_x") == "chat-servers"
    assert serial_group("tests/multihost/test_workers.py::test_y[sqlite]") == "chat-servers-2"
    assert serial_group("tests/integration/test_talk_real.py::test_s[codex]") == "chat-servers-2"
    assert serial_group("tests/integration/test_e2ee_matrix.py::test_r") == "chat-servers"
    assert serial_group("tests/realcli/test_runner_real.py::test_z[gemini]") == "agent-clis"
    assert serial_group("tests/web/test_browser.py::test_w") == "chromium"
    assert serial_group("tests/web/test_actions_browser.py::test_t") == "chromium"
    assert serial_group("tests/web/test_board_http.py::test_v") is None
    assert serial_group("tests/board/test_cli.py::test_u") is None
