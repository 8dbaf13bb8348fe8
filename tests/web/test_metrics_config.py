"""[web] with and without the board, and what `chatbot check` says of /metrics."""

from __future__ import annotations

from pathlib import Path

import pytest

from chatbot.config import ConfigError, parse_config
from chatbot.web.metrics_http import describe as describe_metrics
from tests.board.test_config import MINIMAL as CONFIG


@pytest.mark.parametrize(
    ("web", "message"),
    [
        ('board = false\nmetrics_token_file = "m"\n', "web.metrics_listen: missing: with board"),
        ('board = false\nmetrics_listen = "127.0.0.1:9464"\n', "web.metrics_token_file: missing"),
        ('metrics_listen = "127.0.0.1:9464"\n', "web.token_file: missing: the board needs"),
        (
            'token_file = "t"\nmetrics_listen = "127.0.0.1:99999"\n',
            "web.metrics_listen: port 99999",
        ),
    ],
)
def test_web_without_the_board_is_checked_at_load(tmp_path: Path, web: str, message: str) -> None:
    for name in ("t", "m"):
        (tmp_path / name).write_text("a-long-enough-token-1234\n")
    with pytest.raises(ConfigError) as caught:
        parse_config(CONFIG + "[web]\n" + web, tmp_path / "bot.toml")
    assert f"bot.toml: {message}" in str(caught.value), caught.value
    assert "\n" not in str(caught.value).strip()


def test_check_says_where_metrics_are_served(tmp_path: Path) -> None:
    (tmp_path / "m").write_text("a-long-enough-token-1234\n")
    (tmp_path / "t").write_text("a-long-enough-token-5678\n")
    alone = parse_config(
        CONFIG
        + '[web]\nboard = false\nmetrics_listen = "127.0.0.1:9464"\nmetrics_token_file = "m"\n',
        tmp_path / "bot.toml",
    )
    line = describe_metrics(alone)
    assert line.startswith("metrics: http://127.0.0.1:9464/metrics (also for workers); Bearer"), (
        line
    )
    assert "web.metrics_token_file" in line and "a-long-enough" not in line
    both = parse_config(CONFIG + '[web]\ntoken_file = "t"\n', tmp_path / "bot.toml")
    assert describe_metrics(both).startswith(
        "metrics: http://127.0.0.1:8080/metrics; Bearer token from web.token_file"
    )
    short = CONFIG + '[web]\ntoken_file = "t"\nmetrics_token_file = "s"\n'
    (tmp_path / "s").write_text("short\n")
    with pytest.raises(ConfigError, match="web.metrics_token_file"):
        parse_config(short, tmp_path / "bot.toml")
