"""The web board's parts on their own: columns, texts, escaping, markdown, marks, config."""

from __future__ import annotations

import ast
import logging
import re
import subprocess
import sys
from pathlib import Path

import pytest

from chatbot.board.reads import BoardReads
from chatbot.board.web_reads import ChangeMark, DayRuns, WebReads
from chatbot.config import ConfigError, parse_config
from chatbot.domain.phases import Phase
from chatbot.web import describe, web_settings
from chatbot.web.chart import runs_chart
from chatbot.web.connections import Reports
from chatbot.web.groups import GROUP_OF, Group
from chatbot.web.markup import Safe, age, esc, markdown, tag
from chatbot.web.settings import Caps, caps
from chatbot.web.texts import DE, EN, Texts
from tests.contracts.test_imports import ROOT, import_graph


def test_every_phase_sits_in_exactly_one_column() -> None:
    assert set(GROUP_OF) == set(Phase)
    # "Waiting for you" is the inbox's (board/waiting.py), never a phase's.
    assert set(GROUP_OF.values()) == set(Group) - {Group.WAITING}


def test_both_catalogues_have_every_key_with_the_same_placeholders() -> None:
    assert set(EN) == set(DE)
    for key in EN:
        assert set(re.findall(r"{(\w+)}", EN[key])) == set(re.findall(r"{(\w+)}", DE[key])), key


def test_values_are_escaped_unless_we_built_them() -> None:
    assert tag("<p>{x}</p>", x='<b a="1">&') == "<p>&lt;b a=&quot;1&quot;&gt;&amp;</p>"
    assert tag("<p>{x}</p>", x=Safe("<b>ok</b>")) == "<p><b>ok</b></p>"
    assert tag("<p>{x}</p>", x="{y}") == "<p>{y}</p>"  # a value is never a template
    assert esc(None) == ""


@pytest.mark.parametrize(
    ("source", "absent", "present"),
    [
        ("<script>alert(1)</script>", "<script>", "&lt;script&gt;"),
        ('<img src=x onerror="alert(1)">', "<img", "&lt;img"),
        ("[click](javascript:alert(1))", 'href="javascript:', "[click](javascript:alert(1))"),
        ("![x](https://elsewhere.example/x.png)", "<img", 'href="https://elsewhere.example/x.png"'),
        ("[ok](https://example.org) **b**", "<script", '<a href="https://example.org">ok</a>'),
    ],
)
def test_markdown_has_no_raw_html_no_images_no_script_links(source, absent, present) -> None:
    rendered = markdown(source)
    assert absent not in rendered and present in rendered


def test_markdown_renders_tables_and_code() -> None:
    rendered = markdown("| a | b |\n|---|---|\n| 1 | <2> |\n\n```\nx < y\n```\n")
    assert "<td>&lt;2&gt;</td>" in rendered and "<pre><code>x &lt; y\n</code></pre>" in rendered


def test_ages_read_at_a_glance() -> None:
    units = Texts("en").units
    assert [age(s, units) for s in (0, 59, 60, 3599, 3600, 86400 * 3)] == [
        "0 s",
        "59 s",
        "1 min",
        "59 min",
        "1 h",
        "3 d",
    ]
    assert age(90, Texts("de").units) == "1 Min."


def test_a_change_mark_survives_its_trip_through_the_browser() -> None:
    mark = ChangeMark(7, 1796101656.2153788, 3, 0.0, 12, 1796101660.8958287, 1.5, 4)
    assert ChangeMark.parse(mark.token()) == mark
    for garbage in (
        "",
        "1:2",
        "a:b:c:d:e:f:g:h",
        "1:2:3:4:5:6:7:8:9",
        "<script>",
        "1:nan:1:1:1:1:1:1",
        "1:inf:1:1:1:1:1:1",
    ):
        assert ChangeMark.parse(garbage) is None


def test_the_chart_has_a_bar_per_day_and_no_style_attributes() -> None:
    now = 1_796_000_000.0
    from datetime import datetime, timedelta

    today = datetime.fromtimestamp(now).date()
    rows = [
        DayRuns(today.isoformat(), 4, 1.25),
        DayRuns((today - timedelta(days=2)).isoformat(), 2, 0.5),
    ]
    svg = runs_chart(rows, 14, Texts("en"), now)
    assert svg.count('<rect class="bar"') == 14
    assert f"4 runs, cost $1.25 on {today.isoformat()}" in svg
    assert "runs: 6" in svg and "$1.75" in svg
    assert " style=" not in svg and "http" not in svg


CONFIG = """
[bot]
owners = ["owner@localhost"]
repo = "repo"
[runtimes.codex]
binary = "{codex}"
[lanes.light]
runtime = "codex"
model = "m"
iteration_limit = 10
""".replace("{codex}", str(Path(__file__).resolve().parents[1] / "bin" / "codex"))


def test_the_web_section_is_read_and_checked(tmp_path: Path) -> None:
    file = tmp_path / "bot.toml"
    assert web_settings(parse_config(CONFIG, file)) is None
    assert describe(parse_config(CONFIG, file)) == "web board: off (no [web] section)"
    web = '\n[web]\nlisten = "127.0.0.1:8088"\ntoken_file = "secrets/web-token"\n'
    with pytest.raises(ConfigError, match="web.token_file: secret file .* does not exist"):
        parse_config(CONFIG + web, file)
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "web-token").write_text("short\n")
    with pytest.raises(ConfigError, match="fewer than 16 characters; make a long one with"):
        parse_config(CONFIG + web, file)
    (tmp_path / "secrets" / "web-token").write_text("a-long-enough-token-1234\n")
    config = parse_config(CONFIG + web, file)
    settings = web_settings(config)
    assert (settings.host, settings.port, settings.token) == (
        "127.0.0.1",
        8088,
        "a-long-enough-token-1234",
    )
    line = describe(config)
    assert line.startswith("web board: http://127.0.0.1:8088/ (token from ")
    assert "a-long-enough-token-1234" not in line and "TLS" not in line
    open_web = web.replace("127.0.0.1:8088", "0.0.0.0:8088")
    assert "put a TLS proxy in front" in describe(parse_config(CONFIG + open_web, file))
    v6 = web_settings(parse_config(CONFIG + web.replace("127.0.0.1:8088", "[::1]:8088"), file))
    assert (v6.host, v6.port, v6.url) == ("::1", 8088, "http://[::1]:8088/")
    for bad in ("8080", "localhost", "127.0.0.1:", "http://127.0.0.1:8080"):
        with pytest.raises(ConfigError, match="web.listen: .* is not an address and port"):
            parse_config(CONFIG + web.replace("127.0.0.1:8088", bad), file)


def test_the_caps_stay_below_a_quarter_of_the_descriptors(tmp_path: Path) -> None:
    assert caps(256, 65536) == Caps(256, 128, 64, 65536, lowered=False)
    assert caps(256, 1024) == Caps(256, 128, 64, 1024, lowered=False)
    assert caps(256, 128) == Caps(32, 16, 8, 128, lowered=True)
    assert caps(256, None).connections == 256  # no limit at all
    assert caps(4, 8).connections >= 2 and caps(4, 8).streams >= 1

    file = tmp_path / "bot.toml"
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "web-token").write_text("a-long-enough-token-1234\n")
    web = '\n[web]\nlisten = "127.0.0.1:8088"\ntoken_file = "secrets/web-token"\n'
    settings = web_settings(parse_config(CONFIG + web, file))
    assert settings.max_connections == 256
    assert settings.trusted_proxies == ("127.0.0.1/8", "::1")
    tuned = web + 'max_connections = 64\ntrusted_proxies = ["10.1.2.3", "fd00::/8"]\n'
    config = parse_config(CONFIG + tuned, file)
    settings = web_settings(config)
    assert settings.max_connections == 64
    assert settings.trusted_proxies == ("10.1.2.3", "fd00::/8")
    line = describe(config)
    found = settings.caps()
    assert f"at most {found.connections} connections at once, {found.streams} of them" in line
    assert "request headers within 10 s; X-Forwarded-Proto trusted from 10.1.2.3, fd00::/8" in line
    with pytest.raises(ConfigError, match=r"web.trusted_proxies: 'proxy.example' is not an IP"):
        parse_config(CONFIG + web + 'trusted_proxies = ["proxy.example"]\n', file)
    with pytest.raises(ConfigError, match="web.max_connections: must be at least 4"):
        parse_config(CONFIG + web + "max_connections = 1\n", file)


def test_a_limit_of_descriptors_lower_than_the_setting_is_named_by_check(tmp_path) -> None:
    """`check` runs the same code under its own limit: run it with 128 descriptors."""
    script = (
        "import resource, sys\n"
        "hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]\n"
        "resource.setrlimit(resource.RLIMIT_NOFILE, (128, hard))\n"
        "from chatbot.web.settings import WebSettings, describe_caps\n"
        "settings = WebSettings('127.0.0.1', 8080, '')\n"
        "print(describe_caps(settings, settings.caps()))\n"
    )
    said = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout
    assert said.startswith(
        "at most 32 connections at once, 16 of them live pages (a quarter of this "
        "process's limit of 128 open files; [web] max_connections is 256)"
    ), said


def test_reports_hold_back_repeats_and_count_them(caplog) -> None:
    now = [0.0]
    reports = Reports(every_s=10, clock=lambda: now[0])
    caplog.set_level(logging.INFO, logger="chatbot.web.connections")
    for second in (0, 1, 2, 9.9, 10, 10.5, 25):
        now[0] = second
        reports.say("bad request", logging.WARNING, "web board: bad request from %s", "::1")
    reports.say("failed", logging.ERROR, "web board: a request failed")  # another kind
    assert [r.getMessage() for r in caplog.records] == [
        "web board: bad request from ::1",
        "web board: bad request from ::1 (3 more since the last such line)",
        "web board: bad request from ::1 (1 more since the last such line)",
        "web board: a request failed",
    ]


# --- layering -------------------------------------------------------------------------


def test_the_web_board_reads_the_board_and_imports_nothing_of_the_store() -> None:
    graph = import_graph()
    web = {name: targets for name, targets in graph.items() if name.startswith("chatbot.web")}
    assert len(web) >= 8
    for name, targets in web.items():
        assert not [t for t in targets if t.startswith("chatbot.store")], name
        assert not [
            t
            for t in targets
            if t.startswith(
                ("chatbot.chat", "chatbot.transports", "chatbot.pipeline", "chatbot.app")
            )
        ], name
    users = {
        name for name, targets in graph.items() if any(t.startswith("chatbot.web") for t in targets)
    }
    assert {u for u in users if not u.startswith("chatbot.web")} == {
        "chatbot.app.serve",
        "chatbot.app.check",
    }


def test_the_web_board_calls_only_the_boards_reads() -> None:
    """Read-only by construction: every method it calls on the board's reads (`reads`,
    `web`) is one of theirs; the rest it holds is typed by board/ports.py's WebSide."""
    reads = {
        name for kind in (BoardReads, WebReads) for name in dir(kind) if not name.startswith("_")
    }
    called = set()
    for path in (ROOT / "chatbot" / "web").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            holder = node.value if isinstance(node, ast.Attribute) else None
            # `web` alone is aiohttp's module (and `config.web` the settings): the web's
            # own reads are `self.web`, `self._web`.
            mine = isinstance(holder, ast.Attribute) and (
                holder.attr in ("reads", "_reads")
                or (
                    holder.attr in ("web", "_web")
                    and isinstance(holder.value, ast.Name)
                    and holder.value.id == "self"
                )
            )
            if mine or (isinstance(holder, ast.Name) and holder.id in ("reads", "_reads")):
                called.add(node.attr)
    assert called and called <= reads, called - reads
    assert {"changed_cards", "card_list", "change_mark", "view", "card_runs"} <= called


def test_chatbot_check_reports_the_web_listener(tmp_path: Path, capsys) -> None:
    from chatbot.app.cli import main

    (tmp_path / "web-token").write_text("a-long-enough-token-1234\n")
    (tmp_path / "repo" / "docs" / "intent").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(tmp_path / "repo")], check=True)
    file = tmp_path / "bot.toml"
    file.write_text(CONFIG + '\n[web]\nlisten = "127.0.0.1:8099"\ntoken_file = "web-token"\n')
    assert main(["check", "--config", str(file), "--no-connect"]) == 0
    out = capsys.readouterr().out
    assert f"web board: http://127.0.0.1:8099/ (token from {tmp_path / 'web-token'};" in out
    assert "a-long-enough-token-1234" not in out
