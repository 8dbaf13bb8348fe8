"""The looking commands that depend on who asks or on git: /help per role and /diff."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from chatbot.chat import render, render_help
from chatbot.chat.authority import Standing
from chatbot.chat.commands import COMMANDS, Access
from chatbot.domain.phases import Phase
from chatbot.notify.format import markdown_html
from chatbot.transports.base import Room

from .conftest import MATRIX_OWNER, REQUESTER, Env, make_env, msg


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
        cwd=repo,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()


def commit(repo: Path, files: dict[str, str], subject: str) -> str:
    if not (repo / ".git").exists():
        git(repo, "init", "-q")
    for name, text in files.items():
        (repo / name).write_text(text)
    git(repo, "add", "--all")
    git(repo, "commit", "-qm", subject)
    return git(repo, "rev-parse", "HEAD")


# --- /help for the caller -------------------------------------------------------------


async def test_an_owner_sees_every_command_and_the_reactions(env: Env) -> None:
    text = (await env.one(msg("/help all"))).text
    for command in COMMANDS:
        assert command.usage in text
    assert "Reactions" in text


async def test_a_requester_sees_what_they_may_look_at_or_ask_for(env: Env) -> None:
    text = (await env.one(msg("/help all", REQUESTER))).text
    shown = {c.name for c in COMMANDS if c.usage + " " in text}
    assert shown == {c.name for c in COMMANDS if c.access is not Access.OWNER}
    assert "/start <slug> — build a planned card" in text
    assert "(becomes a request for an owner)" in text
    assert "Reactions" not in text and "/archive" not in text and "/accept" not in text


async def test_the_first_help_is_five_commands_to_start_with(env: Env) -> None:
    owner = (await env.one(msg("/help"))).text.splitlines()
    assert owner[0] == "Start with these:"
    assert [line.split()[0] for line in owner[1:6]] == [
        "/draft",
        "/start",
        "/status",
        "/inbox",
        "/why",
    ]
    assert owner[-1] == "/help all lists every command and reaction; /help <command> explains one."
    requester = (await env.one(msg("/help", REQUESTER))).text
    assert requester.count("(becomes a request for an owner)") == 2  # /draft and /start
    assert "1️⃣" not in requester and "/help all lists everything you may use" in requester
    # One command still has its own line.
    assert (await env.one(msg("/help why"))).text.startswith("/why <slug> — ")


def test_help_per_role_in_german() -> None:
    requester = render_help.help_text("de", role=Standing.REQUESTER)
    assert "wird zu einer Anfrage an einen Owner" in requester and "/archive" not in requester
    stranger = render_help.help_text("de", role=Standing.STRANGER, identity="x@example.org")
    assert "x@example.org" in stranger and "/status" not in stranger
    hidden = render_help.help_text("de", role=Standing.STRANGER)
    assert "verbirgt echte Adressen" in hidden


async def test_a_stranger_in_a_room_that_hides_them_learns_why(env: Env) -> None:
    [row] = await env.said(msg("/help", None))
    assert "hides real addresses" in row.text and "/start" not in row.text


# --- /diff ----------------------------------------------------------------------------


@pytest.fixture
def repo(env: Env) -> Path:
    return env.board.repo


async def test_diff_shows_a_summary_then_each_file_numbered_in_code_blocks(env: Env, repo) -> None:
    commit(repo, {"README.md": "hello\n"}, "Start")
    lines = "".join(f"line {n} with /status and ``` inside\n" for n in range(500))
    head = commit(repo, {"report.py": lines, "b.txt": "b\n"}, "Add the report")
    await env.card("report", Phase.READY_FOR_DEPLOYMENT, commit_hash=head)
    summary, patch, *files = await env.said(msg("/diff report", REQUESTER))
    assert summary.text.startswith(f"report: commit {head[:12]}, 2 files, +501 -0.")
    assert "1. b.txt +1 -0 (new file)" in summary.text and "2. report.py +500 -0" in summary.text
    assert "/comment report <file>:<line> <text>" in summary.text
    # Longer than its post shows: the whole change as a .patch file too (issue 36).
    assert patch.text.startswith("📎 report: the whole change as one file (")
    assert patch.attachment_id is not None
    kept = await env.board.files.attachment(patch.attachment_id)
    assert kept is not None and kept.name == f"report-{head[:12]}.patch"
    whole = (await env.board.files.data(patch.attachment_id)).decode()
    assert "+line 499 with /status and ``` inside" in whole and "b.txt" in whole
    assert [f.purpose for f in files] == ["diff", "diff"]
    text = files[1].text
    assert text.startswith(f"📄 2/2 report.py +500 -0 · report {head[:12]} (new file)")
    # Each line with its number in the new file; a fence the code cannot close.
    assert "````\n" in text and "   1 + line 0 with /status and ``` inside" in text
    assert "… 441 more lines (the card's page on the web board has them all)." in text
    assert len(text) <= render.MAX_CHARS
    html = markdown_html(text)
    assert html.count("<pre><code") == 1 and html.rstrip().endswith("</p>")
    assert files[1].diff_view_id is not None and files[1].card_id is not None


async def test_diff_pages_and_a_page_past_the_last(env: Env, repo) -> None:
    head = commit(repo, {f"f{n}.txt": f"{n}\n" for n in range(7)}, "Seven files")
    await env.card("many", Phase.READY_FOR_DEPLOYMENT, commit_hash=head)
    summary, patch, *files = await env.said(msg("/diff many"))
    assert "Page 1 of 3." in summary.text and "More files: /diff many 2." in summary.text
    assert patch.attachment_id is not None and len(files) == 3
    # The file comes with the first page only.
    summary, *files = await env.said(msg("/diff many 3"))
    assert "Page 3 of 3." in summary.text and "More files" not in summary.text
    assert [f.text.split(" ")[1] for f in files] == ["7/7"]
    refused = await env.one(msg("/diff many 4"))
    assert "has no page 4: /diff many 3 is its last" in refused.text


async def test_diff_in_a_bang_room_keeps_the_diffs_own_words(tmp_path: Path, store) -> None:
    env = make_env(store, tmp_path, prefixes=("!",))
    repo = env.board.repo
    head = commit(repo, {"cli.py": "print('/status')\n"}, "Say /status")
    await env.card("cli", Phase.READY_FOR_DEPLOYMENT, commit_hash=head)
    summary, file = await env.said(msg("!diff cli"))
    assert "   1 + print('/status')" in file.text
    assert "!comment cli" in summary.text


async def test_diff_without_a_commit_says_where_the_card_is_and_what_to_do(env: Env) -> None:
    await env.card("early")
    row = await env.one(msg("/diff early"))
    assert row.text == "early has no commit yet (planned). /status early says what comes next."
    assert (await env.one(msg("/status early"))).text.startswith("early")


async def test_diff_of_a_commit_git_does_not_have_says_why(env: Env, repo) -> None:
    commit(repo, {"a.txt": "a\n"}, "A")
    await env.card("lost", Phase.READY_FOR_DEPLOYMENT, commit_hash="0" * 40)
    row = await env.one(msg("/diff lost"))
    assert row.purpose == "refusal"
    assert row.text.startswith("Could not show lost's commit 000000000000: fatal: bad object")
    assert row.text.endswith("/status lost shows the card.")


async def test_diff_of_an_unknown_card_suggests_the_close_ones(env: Env) -> None:
    await env.card("report")
    assert "Did you mean report?" in (await env.one(msg("/diff reprot"))).text


async def test_diff_when_the_repository_is_gone(env: Env, repo) -> None:
    await env.card("gone", Phase.READY_FOR_DEPLOYMENT, commit_hash="a" * 40)
    repo.rename(repo.with_name("moved"))
    row = await env.one(msg("/diff gone"))
    assert "the repository is not there" in row.text


async def test_inbox_and_why_in_chat(env):
    from tests.chat.conftest import dm

    assert (await env.one(msg("/inbox"))).text == "Nothing waits for you."
    await env.card("broken", Phase.FAILED, failure_stage="review")
    text = (await env.one(dm("inbox"))).text  # the bare word in a direct chat
    assert "broken: the review stage failed" in text and "/retry broken, /fix broken" in text
    assert (await env.one(msg("/inbox", REQUESTER))).text == "Nothing waits for you."
    why = (await env.one(msg("/why broken"))).text
    assert why == "broken is held by its failed review stage. Way on: /retry broken, /fix broken."
    unknown = (await env.one(msg("/why brokn"))).text
    assert "brokn" in unknown and "broken" in unknown  # close slugs are suggested


async def test_a_long_inbox_lists_the_oldest_and_says_how_many_more(env) -> None:
    from chatbot.chat.render_inbox import SHOWN_IN_CHAT

    for n in range(SHOWN_IN_CHAT + 7):
        await env.card(f"broken-{n:02d}", Phase.FAILED, failure_stage="review")
    lines = (await env.one(msg("/inbox"))).text.splitlines()
    assert lines[0] == f"Waiting for you ({SHOWN_IN_CHAT + 7}), oldest first:"
    assert len(lines) == 1 + SHOWN_IN_CHAT + 1
    assert lines[1].startswith("❌ broken-00:")
    assert lines[-1] == "… and 7 more; `chatbot inbox` lists them all."


@pytest.mark.parametrize(
    "locale, usage, unknown",
    [
        ("en", "Usage: /why <slug>", "There is no card 'login-pag'. Did you mean login-page?"),
        ("de", "Aufruf: /why <slug>", "Es gibt keine Karte 'login-pag'. Gemeint: login-page?"),
    ],
)
async def test_why_without_a_slug_or_with_an_unknown_one(
    store, tmp_path, locale: str, usage: str, unknown: str
) -> None:
    env = make_env(store, tmp_path, locale=locale)
    await env.card("login-page")
    assert usage in (await env.one(msg("/why"))).text
    assert (await env.one(msg("/why login-pag"))).text == unknown
    assert "'zzz'" in (await env.one(msg("/why zzz"))).text


async def test_hostile_content_in_a_diff_is_inert_and_bounded_in_chat(env: Env, repo) -> None:
    commit(repo, {"README.md": "x\n"}, "Start")
    (repo / "evil.html").write_text("<script>alert(1)</script>\x1b[31m\u202eevil\u200b ````\n")
    (repo / "huge.min.js").write_text("var a=" + "1" * 10_000_000 + ";\n")
    (repo / "bytes.txt").write_bytes(b"ok \xff\xfe not utf-8\n")
    head = commit(repo, {}, "Hostile")
    await env.card("evil", Phase.READY_FOR_DEPLOYMENT, commit_hash=head)
    matrix = Room("matrix", "!room:example.org")
    summary, *files = await env.said(msg("/diff evil", MATRIX_OWNER, chat=matrix))
    assert len(files) == 3
    for row in (summary, *files):
        assert len(row.text) <= render.MAX_CHARS
        assert "\x1b" not in row.text and "\u202e" not in row.text and "\u200b" not in row.text
        assert row.html is not None and "<script" not in row.html
    by_path = {f.text.split(" ")[2]: f for f in files}
    evil = by_path["evil.html"]
    assert "&lt;script&gt;" in evil.html and "\\x1b" in evil.text and "\\u202e" in evil.text
    # The added line in Matrix's own colour attribute; nothing else survives the sanitiser.
    assert '<span data-mx-color="#1a7f37">' in evil.html
    huge = by_path["huge.min.js"]
    assert len(huge.text) < 1_000 and "…" in huge.text
    assert "ok \ufffd\ufffd not utf-8" in by_path["bytes.txt"].text
