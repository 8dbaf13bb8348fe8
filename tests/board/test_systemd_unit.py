"""The example systemd unit: what it promises an operator, checked against the code."""

from __future__ import annotations

import configparser
from pathlib import Path

from chatbot.app.cli import EXIT_USAGE

UNIT = Path(__file__).resolve().parents[2] / "config" / "intent-board.service"


def service_section() -> dict[str, str]:
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.optionxform = str  # systemd keys are case-sensitive
    parser.read_string(UNIT.read_text())
    return dict(parser["Service"])


def test_a_configuration_error_is_not_restarted_forever() -> None:
    service = service_section()
    assert service["Restart"] == "on-failure"
    # The exit status the CLI uses for a configuration error stops the restarts.
    assert service["RestartPreventExitStatus"] == str(EXIT_USAGE)


def test_the_unit_waits_for_the_bots_own_readiness() -> None:
    service = service_section()
    assert service["Type"] == "notify" and service["NotifyAccess"] == "main"
