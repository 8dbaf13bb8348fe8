"""The command table: parsing every command, usage lines and /help generated from it."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatbot.chat import reactions, render, render_help
from chatbot.chat.commands import (
    BY_NAME,
    COMMANDS,
    Access,
    CommandCall,
    Problem,
    UsageProblem,
    is_command,
    parse,
)
from chatbot.domain.transitions import OWNER_ACTIONS, Action

GOOD = [
    ("/help", "help", {"command": None}),
    ("/help start", "help", {"command": "start"}),
    ("/help /start", "help", {"command": "start"}),
    ("/status", "status", {"slug": None}),
    ("/status Login-Page", "status", {"slug": "login-page"}),
    ("/start login", "start", {"slug": "login"}),
    ("/draft a login page\nwith two fields", "draft", {"text": "a login page\nwith two fields"}),
    ("/draft\nfirst line", "draft", {"text": "first line"}),
    ("/answer login use OAuth, please", "answer", {"slug": "login", "text": "use OAuth, please"}),
    ("/split login", "split", {"slug": "login"}),
    ("/confirm login", "confirm", {"slug": "login"}),
    ("/research r-1", "research", {"slug": "r-1"}),
    ("/inspect login", "inspect", {"slug": "login", "mode": None}),
    ("/inspect login route", "inspect", {"slug": "login", "mode": "route"}),
    ("/inspect login STATUS", "inspect", {"slug": "login", "mode": "status"}),
    ("/fix login", "fix", {"slug": "login"}),
    ("/retry login", "retry", {"slug": "login", "checks": None}),
    ("/retry login --skip-checks", "retry", {"slug": "login", "checks": "--skip-checks"}),
    ("/cancel login", "cancel", {"slug": "login"}),
    ("/archive login", "archive", {"slug": "login"}),
    ("/deploy login", "deploy", {"slug": "login", "checks": None}),
    ("/log login", "log", {"slug": "login", "as": None}),
    ("/log login --file", "log", {"slug": "login", "as": "--file"}),
    ("/attach login", "attach", {"slug": "login"}),
    ("/diff Login", "diff", {"slug": "login", "page": None}),
    ("/diff login 2", "diff", {"slug": "login", "page": 2}),
    (
        "/comment login app.py:12-14 use a set",
        "comment",
        {"slug": "login", "file:line": "app.py:12-14", "text": "use a set"},
    ),
    ("!diff login", "diff", {"slug": "login", "page": None}),
    ("/runs", "runs", {"pipeline": None}),
    ("/runs 3F9C0A1B2D4E", "runs", {"pipeline": "3f9c0a1b2d4e"}),
    ("/budget", "budget", {}),
    ("/inbox", "inbox", {}),
    ("/why Login", "why", {"slug": "login"}),
    ("/allow", "allow", {"slug": None}),
    ("/allow Login", "allow", {"slug": "login"}),
    ("/accept 12", "accept", {"request": 12}),
    ("/decline #3", "decline", {"request": 3}),
    (
        "/steer login use the v2 API\nplease",
        "steer",
        {"slug": "login", "text": "use the v2 API\nplease"},
    ),
    # A steer may be longer than other free text: its handler cuts it and says so.
    ("/steer login " + "x" * 5000, "steer", {"slug": "login", "text": "x" * 5000}),
    ("/approve login", "approve", {"slug": "login"}),
    ("/deny login", "deny", {"slug": "login", "reason": None}),
    ("/deny login no network", "deny", {"slug": "login", "reason": "no network"}),
    ("/interrupt Login", "interrupt", {"slug": "login"}),
    (
        "/every weekdays 09:00 /research deps",
        "every",
        {"when+command": "weekdays 09:00 /research deps"},
    ),
    ("/at tomorrow 02:00 /start x", "at", {"when+command": "tomorrow 02:00 /start x"}),
    ("/routines", "routines", {}),
    ("/routine pause 3", "routine", {"what": "pause", "id": 3}),
    ("/routine DELETE #4", "routine", {"what": "delete", "id": 4}),
    ("/timezone", "timezone", {"zone": None}),
    ("/timezone Europe/Berlin", "timezone", {"zone": "europe/berlin"}),
    ("/web", "web", {"what": None, "which": None}),
    ("/web sessions", "web", {"what": "sessions", "which": None}),
    ("/web sessions ALL", "web", {"what": "sessions", "which": "all"}),
    ("/web Revoke", "web", {"what": "revoke", "which": None}),
    ("/web revoke 3", "web", {"what": "revoke", "which": "3"}),
    ("/web revoke #4", "web", {"what": "revoke", "which": "#4"}),
    ("  /START   login  ", "start", {"slug": "login"}),
    ("/start\tlogin", "start", {"slug": "login"}),
]


@pytest.mark.parametrize("text, name, args", GOOD)
def test_good_commands_parse(text: str, name: str, args: dict) -> None:
    parsed = parse(text)
    assert isinstance(parsed, CommandCall), parsed
    assert parsed.name == name
    assert parsed.args == args


BAD = [
    ("/start", "start", Problem.MISSING, "slug"),
    ("/start Bad_Slug!", "start", Problem.BAD_SLUG, "Bad_Slug!"),
    ("/start a b", "start", Problem.TOO_MANY, "b"),
    ("/draft", "draft", Problem.MISSING, "text"),
    ("/answer login", "answer", Problem.MISSING, "text"),
    ("/answer", "answer", Problem.MISSING, "slug"),
    ("/inspect login deep", "inspect", Problem.BAD_CHOICE, "deep"),
    ("/inspect login route now", "inspect", Problem.TOO_MANY, "now"),
    ("/accept x", "accept", Problem.BAD_NUMBER, "x"),
    ("/accept 0", "accept", Problem.BAD_NUMBER, "0"),
    ("/decline -1", "decline", Problem.BAD_NUMBER, "-1"),
    ("/accept ٣", "accept", Problem.BAD_NUMBER, "٣"),  # not an ASCII digit
    ("/runs a b", "runs", Problem.TOO_MANY, "b"),
    ("/budget now", "budget", Problem.TOO_MANY, "now"),
    ("/inbox all", "inbox", Problem.TOO_MANY, "all"),
    ("/why", "why", Problem.MISSING, "slug"),
    ("/why a b", "why", Problem.TOO_MANY, "b"),
    ("/allow -x", "allow", Problem.BAD_SLUG, "-x"),
    ("/status a b", "status", Problem.TOO_MANY, "b"),
    ("/log", "log", Problem.MISSING, "slug"),
    ("/steer login", "steer", Problem.MISSING, "text"),
    ("/steer -x hi", "steer", Problem.BAD_SLUG, "-x"),
    ("/deny", "deny", Problem.MISSING, "slug"),
    ("/answer login " + "x" * 5000, "answer", Problem.TOO_LONG, "x" * 5000),
    ("/web login", "web", Problem.BAD_CHOICE, "login"),
    ("/web revoke 1 2", "web", Problem.TOO_MANY, "2"),
]
# Every one-slug command: without its slug, with a bad one, with one word too many.
for _name in (
    "split",
    "confirm",
    "research",
    "fix",
    "cancel",
    "archive",
    "attach",
    "approve",
    "interrupt",
):
    BAD += [
        (f"/{_name}", _name, Problem.MISSING, "slug"),
        (f"/{_name} -x", _name, Problem.BAD_SLUG, "-x"),
        (f"/{_name} a b", _name, Problem.TOO_MANY, "b"),
    ]
# /retry and /deploy take --skip-checks after the slug, and nothing else.
for _name in ("retry", "deploy"):
    BAD += [
        (f"/{_name}", _name, Problem.MISSING, "slug"),
        (f"/{_name} -x", _name, Problem.BAD_SLUG, "-x"),
        (f"/{_name} a b", _name, Problem.BAD_CHOICE, "b"),
        (f"/{_name} a --skip-checks c", _name, Problem.TOO_MANY, "c"),
    ]
BAD += [
    ("/diff", "diff", Problem.MISSING, "slug"),
    ("/diff a b", "diff", Problem.BAD_NUMBER, "b"),
    ("/diff a 2 3", "diff", Problem.TOO_MANY, "3"),
    ("/comment", "comment", Problem.MISSING, "slug"),
    ("/comment a", "comment", Problem.MISSING, "file:line"),
    ("/comment a app.py:3", "comment", Problem.MISSING, "text"),
    ("/log", "log", Problem.MISSING, "slug"),
    ("/log -x", "log", Problem.BAD_SLUG, "-x"),
    ("/log a file", "log", Problem.BAD_CHOICE, "file"),
    ("/log a --file b", "log", Problem.TOO_MANY, "b"),
    ("/every", "every", Problem.MISSING, "when+command"),
    ("/at", "at", Problem.MISSING, "when+command"),
    ("/routines all", "routines", Problem.TOO_MANY, "all"),
    ("/routine", "routine", Problem.MISSING, "what"),
    ("/routine stop 3", "routine", Problem.BAD_CHOICE, "stop"),
    ("/routine pause", "routine", Problem.MISSING, "id"),
    ("/routine pause x", "routine", Problem.BAD_NUMBER, "x"),
    ("/timezone Europe Berlin", "timezone", Problem.TOO_MANY, "Berlin"),
]


@pytest.mark.parametrize("text, name, problem, value", BAD)
def test_bad_arguments_name_the_problem_and_the_command(
    text: str, name: str, problem: Problem, value: str
) -> None:
    parsed = parse(text)
    assert isinstance(parsed, UsageProblem)
    assert parsed.command is BY_NAME[name]
    assert parsed.problem is problem
    assert parsed.value == value
    answer = render.usage_problem(parsed, "en")
    assert f"Usage: {BY_NAME[name].usage}" in answer


def test_every_command_is_tested_good_and_bad() -> None:
    assert {name for _, name, _ in GOOD} == set(BY_NAME)
    with_args = {c.name for c in COMMANDS if any(not a.optional for a in c.args)}
    assert with_args <= {name for _, name, _, _ in BAD}


def test_unknown_command_suggests_close_ones() -> None:
    parsed = parse("/stat")
    assert isinstance(parsed, UsageProblem) and parsed.command is None
    assert parsed.problem is Problem.UNKNOWN_COMMAND
    assert "status" in parsed.suggestions
    answer = render.usage_problem(parsed, "en")
    assert "/stat" in answer and "/status" in answer and "/help" in answer


def test_usage_lines_come_from_the_table() -> None:
    assert BY_NAME["inspect"].usage == "/inspect <slug> [status|route]"
    assert BY_NAME["answer"].usage == "/answer <slug> <text>"
    assert BY_NAME["runs"].usage == "/runs [<pipeline>]"
    assert BY_NAME["allow"].usage == "/allow [<slug>]"
    assert BY_NAME["status"].usage == "/status [<slug>]"


def test_every_owner_action_has_a_command() -> None:
    table_actions = {c.action for c in COMMANDS if c.action is not None}
    assert table_actions == OWNER_ACTIONS
    assert BY_NAME["deploy"].action is Action.DEPLOY


def test_requesters_may_ask_for_start_draft_research_comment_and_attach_only() -> None:
    assert {c.name for c in COMMANDS if c.access is Access.REQUEST} == {
        "start",
        "draft",
        "research",
        "comment",
        "attach",
    }


@pytest.mark.parametrize("locale", ["en", "de"])
def test_help_all_lists_every_command_and_reaction(locale: str) -> None:
    text = render_help.help_text(locale, "all")
    for command in COMMANDS:
        assert command.usage in text
    for reaction in reactions.REACTIONS:
        if reaction.option is None:
            assert reaction.shown in text
    assert "1️⃣–4️⃣" in text


@pytest.mark.parametrize("locale", ["en", "de"])
def test_help_starts_with_five_commands_and_points_at_the_rest(locale: str) -> None:
    # Issue 34: /help was 37 lines in table order with no place to start.
    lines = render_help.help_text(locale).splitlines()
    assert len(lines) <= 8
    starters = [line.split()[0] for line in lines[1:6]]
    assert starters == ["/draft", "/start", "/status", "/inbox", "/why"]
    assert "/help all" in lines[-1]
    assert "/archive" not in "\n".join(lines) and "👍" not in "\n".join(lines)


@pytest.mark.parametrize("locale", ["en", "de"])
def test_help_all_is_sent_whole_in_messages_that_fit(locale: str) -> None:
    text = render_help.help_text(locale, "all", network_lines="x" * 300)
    parts = render_help.in_messages(text, render.MAX_CHARS)
    assert "\n".join(parts) == text
    assert all(len(part) <= render.MAX_CHARS for part in parts)
    assert render_help.in_messages("short", 3500) == ["short"]


def test_help_for_one_command() -> None:
    text = render_help.help_text("en", "inspect")
    assert text.startswith("/inspect <slug> [status|route]")
    assert "owners" in text
    assert "Unknown command /nope" in render_help.help_text("en", "nope")


@pytest.mark.parametrize(
    "text, expected",
    [
        ("/start x", True),
        ("  /runs", True),
        ("/Status\nx", True),
        ("/", False),
        ("/ start", False),
        ("hi /start", False),
        ("/etc/hosts is broken", False),
        ("/x2", False),
    ],
)
def test_what_counts_as_a_command(text: str, expected: bool) -> None:
    assert is_command(text) is expected


@given(st.text(max_size=200))
def test_parse_never_raises(text: str) -> None:
    result = parse("/" + text)
    assert isinstance(result, CommandCall | UsageProblem)


def test_free_text_is_bounded() -> None:
    from chatbot.chat.commands import MAX_TEXT_CHARS, Problem, UsageProblem, parse

    assert not isinstance(parse("/draft " + "x" * MAX_TEXT_CHARS), UsageProblem)
    too_long = parse("/draft " + "x" * (MAX_TEXT_CHARS + 1))
    assert isinstance(too_long, UsageProblem) and too_long.problem is Problem.TOO_LONG
