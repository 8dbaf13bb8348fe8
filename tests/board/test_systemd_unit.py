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


def test_the_unit_gives_the_bot_descriptors_the_web_board_cannot_take() -> None:
    """systemd's default soft limit is 1,024; the board takes at most a quarter of it."""
    from chatbot.web.settings import DEFAULT_MAX_CONNECTIONS, caps

    limit = int(service_section()["LimitNOFILE"])
    assert limit >= 4096
    under_unit = caps(DEFAULT_MAX_CONNECTIONS, limit)
    assert under_unit.connections == DEFAULT_MAX_CONNECTIONS and not under_unit.lowered
    assert under_unit.connections * 4 <= limit
