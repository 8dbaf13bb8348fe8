"""A chat event's log lines name the transport it came from (the structured log)."""

from __future__ import annotations

import json
import logging

from chatbot.app.logformat import JsonLines

from .conftest import Env, msg


async def test_a_chat_events_failure_is_logged_with_its_transport(env: Env, monkeypatch) -> None:
    async def broken(*_args, **_kw):
        raise RuntimeError("the board broke")

    await env.card("alpha")
    monkeypatch.setattr(env.board.reads, "view", broken)
    handler = logging.Handler()
    lines: list[dict] = []
    handler.emit = lambda record: lines.append(json.loads(JsonLines().format(record)))  # type: ignore[method-assign]
    logging.getLogger("chatbot.chat").addHandler(handler)
    try:
        await env.said(msg("/why alpha"))
    finally:
        logging.getLogger("chatbot.chat").removeHandler(handler)
    failed = [line for line in lines if "failed" in line["message"]]
    assert failed and failed[0]["transport"] == "xmpp"
    assert "RuntimeError: the board broke" in failed[0]["exception"]
