"""`confirm_splits` (issue 26): an operator's split is posted as a plan and waits for
the owner. Nothing exists before the approval; 👍 (or /confirm, or "yes") makes the
children and starts the first wave; 👎 or a reason runs the operator again with it."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from chatbot.chat.intake import ChatIntake
from chatbot.domain.phases import Phase
from chatbot.notify.notifier import Notifier
from chatbot.notify.reminders import Reminders
from chatbot.store import chat as chat_store
from chatbot.transports.base import Envelope, Identity, IncomingMessage
from tests.pipeline.harness import (
    BIN,
    CONFIG,
    Harness,
    child,
    direct,
    make_repo,
    open_harness,
    operator_answer,
)
from tests.pipeline.room import OWNER, ROOM, ChatRoom, open_room
from tests.pipeline.support import kill_strays, run_idle

INTENT = "# Report\n\nA report in two parts.\n"
REQUESTER = Identity("xmpp", "requester@example.org")


def split_decision() -> str:
    children = [child("part-a", 1, []), child("part-b", 2, ["part-a"])]
    return operator_answer({"decision": "split", "children": children})


def config_text(confirm: bool = True) -> str:
    text = CONFIG.format(bin=BIN)
    line = f'workspaces = "workspaces"\nconfirm_splits = {"true" if confirm else "false"}\n'
    return text.replace('workspaces = "workspaces"\n', line, 1)


async def begin(root: Path, turns: list[dict], monkeypatch, harnesses) -> Harness:
    repo = make_repo(root, {"report": INTENT})
    (root / "scenario.json").write_text(json.dumps({"turns": turns}))
    monkeypatch.setenv("FAKE_CLI_SCENARIO", str(root / "scenario.json"))
    monkeypatch.setenv("FAKE_CLI_STATE", str(root / "scenario.state.json"))
    monkeypatch.setenv("FAKE_CLI_LOG", str(root / "calls.jsonl"))
    h = await open_harness(root, repo, config_text(), root / "calls.jsonl")
    harnesses.append(h)
    return h


async def planned(h: Harness) -> ChatRoom:
    """/start report; the operator's split waits as a plan."""
    room = open_room(h)
    await room.say("/start report")
    await run_idle(h)
    return room


async def plan_waits(root: Path, monkeypatch, harnesses) -> tuple[Harness, ChatRoom]:
    """/start report, whose operator splits it: the plan waits for the owner."""
    turns = [{"match": "OPERATOR-DECISION", "answer": split_decision()}]
    h = await begin(root, turns, monkeypatch, harnesses)
    return h, await planned(h)


async def plan_message(room: ChatRoom):
    rows = await room.rows()
    return next(row for row in rows if row.purpose == "question" and "split plan" in row.text)


async def reply(room: ChatRoom, row, text: str, sender: Identity = OWNER) -> str:
    async with room.h.store.transaction() as db:
        await chat_store.mark_sent(db, row, f"out-{row.id}")
    await room.new()
    await room.chat.handle(
        IncomingMessage(
            envelope=Envelope(
                chat=ROOM,
                sender=sender,
                message_id=f"in-reply-{row.id}-{len(text)}",
                is_direct=False,
                sender_name="someone",
            ),
            text=text,
            reply_to=f"out-{row.id}",
        )
    )
    return "\n".join(await room.new())


@pytest.fixture(autouse=True)
def _no_strays(harnesses):
    yield
    for h in list(harnesses):
        kill_strays(h)


async def test_split_plan_is_posted_and_nothing_is_created(tmp_path, monkeypatch, harnesses):
    h, room = await plan_waits(tmp_path, monkeypatch, harnesses)
    parent = await h.board.reads.card("report")
    assert parent.phase is Phase.SPLIT_PLAN_WAITING
    assert await h.board.reads.children_of(parent.id) == []
    assert not (h.repo / "docs/intent/part-a.md").exists()
    posted = "\n".join(await room.new())
    for shown in (
        "part-a",
        "Part part-a",
        "part-b",
        "after part-a",
        "lane light",
        "src/part-a/**",
        "part-a works",
        "codex gpt-5-codex-mini",
        "/confirm report",
    ):
        assert shown in posted, (shown, posted)


async def test_thumbs_up_creates_children_and_starts_first_wave(tmp_path, monkeypatch, harnesses):
    h, room = await plan_waits(tmp_path, monkeypatch, harnesses)
    await room.react(await plan_message(room), "👍")
    parent = await h.board.reads.card("report")
    kids = {kid.slug: kid for kid in await h.board.reads.children_of(parent.id)}
    assert parent.phase is Phase.SPLIT
    assert kids["part-a"].phase is Phase.BUILDING  # wave 1 started, as without confirmation
    assert kids["part-b"].phase is Phase.PLANNED  # blocked by part-a
    assert kids["part-a"].write_scope == ["src/part-a/**"]
    assert (h.repo / "docs/intent/part-b.md").read_text().startswith("# Part part-b")


async def test_yes_reply_and_confirm_command_approve(tmp_path, monkeypatch, harnesses):
    h, room = await plan_waits(tmp_path, monkeypatch, harnesses)
    await reply(room, await plan_message(room), "yes please")
    assert (await h.board.reads.card("report")).phase is Phase.SPLIT
    # Approved once: /confirm again is refused, nothing is made twice.
    answer = await room.say("/confirm report")
    assert "/confirm is not possible" in answer
    assert len(await h.board.reads.children_of((await h.board.reads.card("report")).id)) == 2


async def test_thumbs_down_or_reason_reruns_the_operator_with_it(tmp_path, monkeypatch, harnesses):
    turns = [
        {"match": "too coarse", "answer": direct()},
        {"match": "OPERATOR-DECISION", "answer": split_decision()},
    ]
    h = await begin(tmp_path, turns, monkeypatch, harnesses)
    room = await planned(h)
    await reply(room, await plan_message(room), "too coarse: keep it one card")
    await run_idle(h)
    parent = await h.board.reads.card("report")
    assert parent.phase is not Phase.SPLIT_PLAN_WAITING
    prompts = h.prompts_of("OPERATOR-DECISION")
    assert len(prompts) == 2 and "too coarse: keep it one card" in prompts[1]
    assert await h.board.reads.children_of(parent.id) == []
    assert not (h.repo / "docs/intent/part-a.md").exists()


async def test_thumbs_down_sends_the_plan_back(tmp_path, monkeypatch, harnesses):
    turns = [
        {"match": "declined this split plan", "answer": direct()},
        {"match": "OPERATOR-DECISION", "answer": split_decision()},
    ]
    h = await begin(tmp_path, turns, monkeypatch, harnesses)
    room = await planned(h)
    await room.react(await plan_message(room), "👎")
    await run_idle(h)
    assert len(h.prompts_of("declined this split plan")) == 1
    parent = await h.board.reads.card("report")
    assert parent.phase is not Phase.SPLIT_PLAN_WAITING
    assert await h.board.reads.children_of(parent.id) == []


async def test_restart_between_plan_and_approval(tmp_path, monkeypatch, harnesses):
    h = await begin(
        tmp_path,
        [{"match": "OPERATOR-DECISION", "answer": split_decision()}],
        monkeypatch,
        harnesses,
    )
    await planned(h)
    await h.store.close()
    harnesses.remove(h)
    again = await open_harness(tmp_path, h.repo, config_text(), h.log)
    harnesses.append(again)
    room = open_room(again)
    waiting = await again.board.reads.card("report")
    assert waiting.phase is Phase.SPLIT_PLAN_WAITING
    assert await again.board.reads.children_of(waiting.id) == []
    answer = await room.say("/confirm report")
    assert "report" in answer
    parent = await again.board.reads.card("report")
    assert parent.phase is Phase.SPLIT
    assert {k.slug for k in await again.board.reads.children_of(parent.id)} == {"part-a", "part-b"}


async def test_requester_cannot_approve(tmp_path, monkeypatch, harnesses):
    h, room = await plan_waits(tmp_path, monkeypatch, harnesses)
    room.chat = ChatIntake(h.board, owners=[OWNER], requesters=[REQUESTER])
    refused = await reply(room, await plan_message(room), "yes", sender=REQUESTER)
    assert "Only an owner may do that" in refused
    parent = await h.board.reads.card("report")
    assert parent.phase is Phase.SPLIT_PLAN_WAITING
    assert await h.board.reads.children_of(parent.id) == []


async def test_split_plan_in_german(tmp_path, monkeypatch, harnesses):
    h = await begin(
        tmp_path,
        [{"match": "OPERATOR-DECISION", "answer": split_decision()}],
        monkeypatch,
        harnesses,
    )
    room = open_room(h, locale="de")
    await room.say("/start report")
    await run_idle(h)
    posted = "\n".join(await room.new())
    assert "Aufteilungsplan freigeben?" in posted and "fertig, wenn: part-a works" in posted
    assert "aufteilungsplan_wartet" == Phase.SPLIT_PLAN_WAITING.label("de")


async def test_plan_that_cannot_be_made_any_more_is_refused(tmp_path, monkeypatch, harnesses):
    h, room = await plan_waits(tmp_path, monkeypatch, harnesses)
    # Someone wrote part-b's intent file while the plan waited.
    (h.repo / "docs/intent/part-b.md").write_text("# Mine\n")
    answer = await room.say("/confirm report")
    assert "part-b.md exists already; nothing was written" in answer, answer
    parent = await h.board.reads.card("report")
    assert parent.phase is Phase.SPLIT_PLAN_WAITING
    assert await h.board.reads.children_of(parent.id) == []
    assert not (h.repo / "docs/intent/part-a.md").exists()
    assert (h.repo / "docs/intent/part-b.md").read_text() == "# Mine\n"
    assert not list((h.repo / "docs/intent").glob(".*.tmp"))  # nothing staged is left


async def test_thumbs_up_on_the_plans_reminder_approves_it(tmp_path, monkeypatch, harnesses):
    """The reminder is a reply to the plan, mentioning the owners: 👍 on it is 👍 on
    the plan (a phone shows the reminder, not the plan hours above it)."""
    h, room = await plan_waits(tmp_path, monkeypatch, harnesses)
    plan = await plan_message(room)
    async with h.store.transaction() as db:
        await chat_store.mark_sent(db, plan, f"out-{plan.id}")
    notifier = h.board.listeners[-1]
    assert isinstance(notifier, Notifier)
    reminders = Reminders(notifier, remind_after_s=60.0)
    assert await reminders.remind(time.time() + 120) == 1
    [reminder] = [row for row in await room.rows() if row.purpose == "reminder"]
    assert reminder.reply_to == f"out-{plan.id}" and "/confirm report" in reminder.text
    await room.react(reminder, "👍")
    parent = await h.board.reads.card("report")
    assert parent.phase is Phase.SPLIT
    assert {kid.slug for kid in await h.board.reads.children_of(parent.id)} == {"part-a", "part-b"}


async def test_inbox_and_why_name_the_plan_and_confirm_works(tmp_path, monkeypatch, harnesses):
    h, room = await plan_waits(tmp_path, monkeypatch, harnesses)
    inbox = await room.say("/inbox")
    assert "🧭 report: its split plan waits for your approval since" in inbox, inbox
    assert "part-a, part-b — 👍, /confirm report, /answer report <reason>" in inbox, inbox
    assert "❓" not in inbox  # not also listed as a plain question
    why = await room.say("/why report")
    assert "report waits for your approval of its split plan (2 cards: part-a, part-b)" in why
    assert why.endswith("Way on: /confirm report, /answer report <reason>."), why
    await room.say("/confirm report")
    assert (await h.board.reads.card("report")).phase is Phase.SPLIT
    assert "split plan" not in await room.say("/inbox")
    assert "/confirm" not in await room.say("/why report")


async def test_a_slug_taken_while_the_plan_waited_is_refused_at_confirm(
    tmp_path, monkeypatch, harnesses
):
    """Issue 39: only an intent file written meanwhile was tested; a card made under a
    child's slug (no intent file) between the plan and /confirm must refuse it too."""
    from chatbot.domain.phases import Kind
    from chatbot.store import cards as card_store

    h, room = await plan_waits(tmp_path, monkeypatch, harnesses)
    async with h.store.transaction() as db:
        await card_store.create(db, "part-a", Kind.INTENT, Phase.PLANNED, actor="someone")
    answer = await room.say("/confirm report")
    assert "a card 'part-a' exists already; nothing was created" in answer, answer
    parent = await h.board.reads.card("report")
    assert parent.phase is Phase.SPLIT_PLAN_WAITING
    assert await h.board.reads.children_of(parent.id) == []
    assert not (h.repo / "docs/intent/part-a.md").exists()
    assert not (h.repo / "docs/intent/part-b.md").exists()
    assert not list((h.repo / "docs/intent").glob(".*.tmp"))
