"""Reminders of unanswered questions, requests and approvals, and quiet hours.

A real store (SQLite and PostgreSQL) and the real notifier write the outbox; a pass
of the reminders is called at a chosen moment (a fake clock): no sleeps.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from chatbot.board import BoardService
from chatbot.config import ConfigError, parse_config
from chatbot.domain.phases import Kind, Phase
from chatbot.domain.quiet import QuietHours
from chatbot.domain.transitions import Action
from chatbot.notify.notifier import Destination, Notifier
from chatbot.notify.reminders import DAY_S, Reminders
from chatbot.store import Store
from chatbot.store import cards as card_store
from chatbot.store import chat as chat_store
from chatbot.store import questions as question_store
from chatbot.store import reminders as reminder_store
from chatbot.store import talk as talk_store
from tests.board.test_config import MINIMAL as MINIMAL_CONFIG
from tests.service.clock import Clock, local

ROOM = Destination("xmpp", "ops@muc", owners=("owner@example.org",))
AFTER = 14400.0


class Bot:
    """A board with the notifier and the reminders on one store (re-openable)."""

    def __init__(self, database, tmp_path: Path, clock: Clock, quiet: str | None = None):
        self.database, self.tmp_path, self.clock = database, tmp_path, clock
        self.quiet = QuietHours.parse(quiet) if quiet else None

    async def open(self) -> Bot:
        self.store = await Store.open(
            self.database.value, password_file=self.database.password_file
        )
        self.board = BoardService(self.store, self.tmp_path)
        self.notifier = Notifier(self.store, [ROOM], "en", quiet=self.quiet, clock=self.clock)
        self.board.listeners.append(self.notifier)
        self.reminders = Reminders(self.notifier, AFTER, self.quiet)
        return self

    async def close(self) -> None:
        await self.store.close()

    async def outbox(self) -> list[chat_store.OutboxRow]:
        return await chat_store.pending(self.store.reader, "xmpp")

    async def send_all(self) -> None:
        """What the outbox sender does when the server takes a message."""
        for row in await self.outbox():
            async with self.store.transaction() as db:
                await chat_store.mark_sent(db, row, f"m-{row.id}")

    async def ask(self, slug: str = "c") -> int:
        async with self.store.transaction() as db:
            await card_store.create(db, slug, Kind.INTENT, Phase.OPERATOR_RUNNING, actor="t")
        await self.board.apply(
            slug,
            Action.OPERATOR_NEEDS_HUMAN,
            reason="unclear",
            question=("needs_human", "Which storage?", ["S3", "local disk"]),
        )
        async with self.store.transaction() as db:
            row = await db.fetchone("SELECT max(id) FROM questions")
            return int(row[0])

    async def created(self, question_id: int) -> float:
        async with self.store.transaction() as db:
            return (await question_store.get(db, question_id)).created_at

    async def reminders_sent(self) -> list[chat_store.OutboxRow]:
        return [r for r in await self.outbox() if r.purpose == "reminder"]


@pytest.fixture
async def bot(database, tmp_path: Path):
    opened = await Bot(database, tmp_path, Clock(local(0, 12))).open()
    yield opened
    await opened.close()


async def test_an_unanswered_question_is_reminded_once_as_a_reply_then_daily(bot) -> None:
    question_id = await bot.ask()
    await bot.send_all()
    asked = await bot.created(question_id)
    async with bot.store.transaction() as db:
        found = await db.fetchone(
            "SELECT message_id FROM chat_messages WHERE question_id = ? AND purpose = 'question'",
            (question_id,),
        )
        original = found[0]

    assert await bot.reminders.remind(asked + AFTER - 1) == 0
    assert await bot.reminders.remind(asked + AFTER + 1) == 1
    [reminder] = await bot.reminders_sent()
    assert reminder.reply_to == original and reminder.room == "ops@muc"
    assert reminder.mentions == ("owner@example.org",)
    assert reminder.question_id == question_id
    assert reminder.text.startswith("⏰ c: this question waits for an answer since 4h 00m")
    assert "Which storage?" in reminder.text and "/answer c" in reminder.text
    # Not again the same day, also not after the reminder itself was sent.
    await bot.send_all()
    assert await bot.reminders.remind(asked + AFTER + 60) == 0
    assert await bot.reminders.remind(asked + AFTER + DAY_S - 60) == 0
    # A day after the reminder: once more, again a reply to the original question.
    assert await bot.reminders.remind(asked + AFTER + DAY_S + 2) == 1
    [again] = await bot.reminders_sent()
    assert again.reply_to == original
    assert await bot.reminders.remind(asked + AFTER + DAY_S + 3) == 0


async def test_an_answered_question_is_never_reminded(bot) -> None:
    question_id = await bot.ask()
    await bot.send_all()
    asked = await bot.created(question_id)
    async with bot.store.transaction() as db:
        await question_store.resolve(db, question_id, "S3", "owner@example.org")
    assert await bot.reminders.remind(asked + AFTER + 1) == 0
    assert await bot.reminders.remind(asked + AFTER + 3 * DAY_S) == 0
    assert await bot.reminders_sent() == []


async def test_an_answer_between_reading_and_sending_wins(bot, monkeypatch) -> None:
    """The pass reads what waits, then re-reads it in the transaction that records the
    reminder: an answer in between means no reminder."""
    question_id = await bot.ask()
    await bot.send_all()
    asked = await bot.created(question_id)
    real_waiting = reminder_store.waiting

    async def waiting_then_answered(db):
        found = await real_waiting(db)
        async with bot.store.transaction() as tx:
            await question_store.resolve(tx, question_id, "S3", "owner@example.org")
        return found

    # The only stand-in: an owner's answer lands exactly between the two reads.
    monkeypatch.setattr(reminder_store, "waiting", waiting_then_answered)
    assert await bot.reminders.remind(asked + AFTER + 1) == 0
    assert await bot.reminders_sent() == []


async def test_what_was_reminded_survives_a_restart(database, tmp_path: Path) -> None:
    first = await Bot(database, tmp_path, Clock(local(0, 12))).open()
    question_id = await first.ask()
    await first.send_all()
    asked = await first.created(question_id)
    assert await first.reminders.remind(asked + AFTER + 1) == 1
    await first.send_all()
    await first.close()

    second = await Bot(database, tmp_path, Clock(local(0, 12))).open()
    try:
        # Not repeated after the restart the same day, nor forgotten the next.
        assert await second.reminders.remind(asked + AFTER + 120) == 0
        assert await second.reminders.remind(asked + AFTER + DAY_S + 2) == 1
    finally:
        await second.close()


async def test_a_pending_request_and_an_open_approval_are_reminded(bot) -> None:
    async with bot.store.transaction() as db:
        request = await chat_store.add_request(db, "req@example.org", "xmpp", "start", "c")
        await chat_store.enqueue(
            db,
            chat_store.Post(
                "xmpp", "ops@muc", "request #1", purpose="request", request_id=request.id
            ),
        )
        card = await card_store.create(db, "c", Kind.INTENT, Phase.BUILDING, actor="t")
        job = await db.insert(
            "INSERT INTO jobs (card_id, kind, lane, created_at) VALUES (?, 'builder', 'l', 0)",
            (card.id,),
        )
        approval = await talk_store.add(db, job, card.id, "approval", "rm -rf @home", tool="sh")
        await bot.notifier.post(
            db, "approve?", card=card, purpose="approval", mention_owners=True, talk_id=approval.id
        )
    await bot.send_all()
    later = max(request.created_at, approval.created_at) + AFTER + 1
    assert await bot.reminders.remind(later) == 2
    rows = {"request" if r.request_id else "approval": r for r in await bot.reminders_sent()}
    assert rows["request"].request_id == request.id
    assert rows["request"].text.startswith(f"⏰ Request #{request.id} waits for a decision")
    assert f"/accept {request.id}" in rows["request"].text
    assert rows["approval"].talk_id == approval.id
    # The agent's command is shown inert: no mention of anyone hides in it.
    assert "@\u200bhome" in rows["approval"].text and "/approve c" in rows["approval"].text
    assert all(r.mentions == ("owner@example.org",) and r.reply_to for r in rows.values())


async def test_quiet_hours_mention_nobody_and_end_in_one_message(database, tmp_path) -> None:
    clock = Clock(local(1, 23))  # tomorrow 23:00, inside 22:00-07:00
    bot = await Bot(database, tmp_path, clock, quiet="22:00-07:00").open()
    try:
        old = await bot.ask("old")
        await bot.send_all()
        # The old question falls due for its reminder in quiet hours: nothing is posted.
        asked = await bot.created(old)
        assert await bot.reminders.remind(max(asked + AFTER + 1, clock.now)) == 0
        # A question asked in quiet hours is posted, but mentions nobody.
        await bot.ask("new")
        [new_post] = [r for r in await bot.outbox() if r.purpose == "question"]
        assert new_post.mentions == ()
        await bot.send_all()
        assert await bot.reminders.remind(local(2, 3)) == 0
        assert await bot.reminders.remind(local(2, 6, 59)) == 0
        assert await bot.reminders_sent() == []
        # Quiet hours end: one message naming both, mentioning the owners.
        assert await bot.reminders.remind(local(2, 7, 1)) == 1
        [digest] = await bot.reminders_sent()
        assert digest.text.startswith("🌅 Quiet hours are over; what waited for you (2):")
        assert "old: this question" in digest.text and "new: this question" in digest.text
        assert digest.mentions == ("owner@example.org",) and digest.reply_to is None
        await bot.send_all()
        # Said once: the next passes that morning post nothing more.
        assert await bot.reminders.remind(local(2, 7, 2)) == 0
        assert await bot.reminders.remind(local(2, 10, 0)) == 0
    finally:
        await bot.close()


def test_quiet_hours_wrap_midnight_or_not() -> None:
    night = QuietHours.parse("22:00-07:00")
    assert [night.is_quiet(local(0, h)) for h in (21, 22, 0, 6, 7, 12)] == [
        False,
        True,
        True,
        True,
        False,
        False,
    ]
    lunch = QuietHours.parse("12:30-13:15")
    assert [lunch.is_quiet(local(0, 12, m)) for m in (29, 30, 59)] == [False, True, True]
    assert not lunch.is_quiet(local(0, 13, 15))


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("22-07", 'is not a span like "22:00-07:00"'),
        ("22:00 - 07:00", 'is not a span like "22:00-07:00"'),
        ("24:00-07:00", 'is not a span like "22:00-07:00"'),
        ("07:00-07:00", "starts and ends at the same time"),
    ],
)
def test_a_bad_quiet_hours_value_is_one_clear_line(tmp_path: Path, value: str, words) -> None:
    text = MINIMAL_CONFIG.replace('repo = "repo"', f'repo = "repo"\nquiet_hours = "{value}"')
    with pytest.raises(ConfigError) as caught:
        parse_config(text, tmp_path / "bot.toml")
    message = str(caught.value)
    assert "bot.quiet_hours" in message and words in message
    assert "Traceback" not in message


def test_the_defaults_and_a_good_quiet_hours(tmp_path: Path) -> None:
    config = parse_config(MINIMAL_CONFIG, tmp_path / "bot.toml")
    assert (config.bot.remind_after_s, config.bot.quiet_hours) == (14400, None)
    text = MINIMAL_CONFIG.replace('repo = "repo"', 'repo = "repo"\nquiet_hours = "22:00-07:00"')
    assert parse_config(text, tmp_path / "bot.toml").bot.quiet_hours == "22:00-07:00"
