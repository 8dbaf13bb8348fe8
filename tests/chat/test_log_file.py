"""`/log <slug> --file` (issue 36, "out to chat"): the card's whole history and its runs
as one kept text file, sent with its caption. Its lines are one line each, whatever the
title or an agent's rejected answer held."""

from __future__ import annotations

import dataclasses

from chatbot.board import RunRecord
from chatbot.chat import render_log

from .conftest import Env, dm


async def test_log_as_a_file_is_a_kept_text_file_with_its_caption(env: Env) -> None:
    await env.card("login")
    row = await env.one(dm("/log login --file"))
    assert row.text.startswith("📎 login: its log as a file (")
    assert row.attachment_id is not None
    kept = await env.board.files.attachment(row.attachment_id)
    assert kept is not None and kept.name == "login-log.txt"
    text = (await env.board.files.data(row.attachment_id)).decode()
    assert text.startswith("# login: Title of login\nphase: ")
    assert "## Runs (0, newest first)\n(none)\n" in text


async def test_a_long_title_and_a_rejection_stay_one_line_each(env: Env) -> None:
    await env.card("login")
    view = await env.board.reads.view("login")
    title = "A title\nover two lines " + "x" * 400
    view = dataclasses.replace(view, card=dataclasses.replace(view.card, title=title))
    run = RunRecord(
        role="builder",
        runtime="codex",
        configured_model="gpt-5.5",
        actual_model=None,
        reasoning_effort="",
        input_tokens=10,
        cached_tokens=0,
        output_tokens=2,
        cost_usd=None,
        duration_s=3.0,
        turns=None,
        outcome="ok",
        session_id=None,
        accepted=False,
        rejection="the answer had\nno commit message",
    )

    text = render_log.log_file(view, [run], "en")

    head = text.splitlines()[0]
    assert head.startswith("# login: A title over two lines xxx") and head.endswith("…")
    assert len(head) <= len("# login: ") + render_log.TITLE_CHARS
    [line] = [line for line in text.splitlines() if " | builder | " in line]
    assert line.endswith("| rejected: the answer had no commit message")
