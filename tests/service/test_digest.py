"""The daily digest (`[bot] digest_at`): what moved, what waits, the spend, the failures.

A real store (SQLite and PostgreSQL), the real board and notifier write the outbox; the
digest is looked at a chosen moment (a fake clock) and its loop sleeps on a fake sleep
that only advances that clock: no real waiting.
"""

from __future__ import annotations

import asyncio
import re
import time
from datetime import datetime
from pathlib import Path

import pytest

from chatbot.app import check, demo
from chatbot.board import BoardService
from chatbot.board.inbox import InboxKind
from chatbot.config import ConfigError, parse_config
from chatbot.domain import daily
from chatbot.domain.budgets import Budgets
from chatbot.domain.phases import Kind, Phase
from chatbot.domain.quiet import QuietHours
from chatbot.domain.transitions import Action, By
from chatbot.notify.digest import LISTED, MAX_SLEEP_S, Digest
from chatbot.notify.notifier import Destination, Notifier
from chatbot.notify.texts import TEXTS
from chatbot.store import Store, telemetry
from chatbot.store import cards as card_store
from chatbot.store import chat as chat_store
from tests.board.test_config import MINIMAL as MINIMAL_CONFIG
from tests.demo.serving import serving
from tests.records import run_record
from tests.service.clock import Clock, local

ROOMS = (
    Destination("xmpp", "ops@muc", owners=("owner@example.org",)),
    Destination("matrix", "!ops:example.org", owners=("@owner:example.org",)),
)


def shown(at: float) -> str:
    return datetime.fromtimestamp(at).strftime("%Y-%m-%d %H:%M")


class Bot:
    """A board with the notifier and the digest on one store (re-openable)."""

    def __init__(self, database, tmp_path: Path, clock: Clock, *, locale: str = "en", **kw):
        self.database, self.tmp_path, self.clock, self.locale = database, tmp_path, clock, locale
        self.quiet = kw.get("quiet")

    async def open(self) -> Bot:
        self.store = await Store.open(
            self.database.value, password_file=self.database.password_file
        )
        budgets = Budgets(per_day_usd=20.0)
        self.board = BoardService(self.store, self.tmp_path, budgets=budgets)
        self.notifier = Notifier(self.store, ROOMS, self.locale, quiet=self.quiet, clock=self.clock)
        self.board.listeners.append(self.notifier)
        self.digest = Digest(self.notifier, self.board, daily.parse("09:00"), clock=self.clock)
        return self

    async def close(self) -> None:
        await self.store.close()

    async def digests(self) -> list[chat_store.OutboxRow]:
        rows = []
        for transport in ("xmpp", "matrix"):
            rows += await chat_store.pending(self.store.reader, transport)
        return [r for r in rows if r.purpose == "digest"]

    async def card(self, slug: str, phase: Phase, *moves: tuple[Action, By, dict]) -> int:
        async with self.store.transaction() as db:
            card = await card_store.create(db, slug, Kind.INTENT, phase, actor="t")
            for action, by, changes in moves:
                await card_store.transition(db, slug, action, actor="t", by=by, **changes)
            return card.id

    async def ask(self, slug: str) -> None:
        await self.card(slug, Phase.OPERATOR_RUNNING)
        await self.board.apply(
            slug,
            Action.OPERATOR_NEEDS_HUMAN,
            reason="unclear",
            question=("needs_human", "Which storage?", ["S3", "local disk"]),
        )

    async def spend(self, card_id: int, usd: float) -> None:
        run = run_record(
            configured_model="gpt-5-codex-mini",
            input_tokens=1000,
            output_tokens=100,
            cost_usd=usd,
            duration_s=10.0,
            card_id=card_id,
        )
        async with self.store.transaction() as db:
            await telemetry.record(db, run)


def failed(detail: str) -> tuple[Action, By, dict]:
    changes = {"failure_stage": "builder", "failure_detail": detail, "reason": detail}
    return (Action.BUILD_FAILED, By.SYSTEM, changes)


async def busy_board(bot: Bot) -> None:
    """A day of each kind: a question asked, a card approved, one started, one failed
    and still failed, one failed and retried, and a run that cost $1.25."""
    await bot.ask("asked")
    await bot.card("shipped", Phase.REVIEWING, (Action.REVIEW_APPROVED, By.SYSTEM, {}))
    await bot.card("begun", Phase.PLANNED, (Action.START, By.OWNER, {}))
    broken = await bot.card("broken", Phase.BUILDING, failed("tests broke"))
    await bot.card("recovered", Phase.BUILDING, failed("flaky"), (Action.RETRY, By.OWNER, {}))
    await bot.spend(broken, 1.25)


@pytest.fixture
async def bot(database, tmp_path: Path):
    opened = await Bot(database, tmp_path, Clock(local(0, 12))).open()
    yield opened
    await opened.close()


async def test_a_busy_day_tells_moves_waits_spend_and_failures(bot) -> None:
    await busy_board(bot)
    now = time.time() + 1
    assert await bot.digest.send(now) == 2
    posts = await bot.digests()
    assert sorted((p.transport, p.room) for p in posts) == sorted(
        (r.transport, r.room) for r in ROOMS
    )
    assert all(p.mentions == () and p.reply_to is None for p in posts)
    lines = posts[0].text.splitlines()
    assert lines[0] == f"📰 Since {shown(now - 86400)}:"
    # create + move for four cards, create + fail + retry for one.
    assert lines[1] == "🔀 11 moves on 5 cards."
    assert lines[2] == "✅ finished: shipped (ready for deployment)"
    assert lines[3] == "▶️ started: begun"
    # The oldest of the inbox, with its age and what resolves it.
    assert re.fullmatch(
        r"📥 Waiting for you: 2; the oldest, for \d+s: ❓ asked asks: Which storage\? "
        r"— reply to it or /answer asked <text>",
        lines[4],
    ), lines[4]
    # Issue 34: one helper says "1 run", "2 cards", with no "(s)".
    assert lines[5] == "💸 Spent $1.25 in 1 run. Today: $1.25 of $20.00."
    assert lines[6:] == [
        "❌ 2 cards failed:",
        "- broken: builder failed: tests broke — /retry broken, /fix broken",
        "- recovered: builder failed: flaky; now building",
    ]


async def test_a_quiet_day_is_one_line_and_the_next_covers_from_the_last(bot) -> None:
    first = local(0, 9, 30)
    assert await bot.digest.tick(first) == local(1, 9)
    [post, _] = await bot.digests()
    assert post.text == f"📰 Nothing moved since {shown(first - 86400)}; nothing waits."
    for row in await bot.digests():
        async with bot.store.transaction() as db:
            await chat_store.mark_sent(db, row, f"m-{row.id}")
    assert await bot.digest.tick(local(1, 9)) == local(2, 9)
    [again, _] = await bot.digests()
    assert again.text == f"📰 Nothing moved since {shown(first)}; nothing waits."


async def test_long_lists_are_cut_with_how_many_more(bot) -> None:
    for n in range(LISTED + 3):
        await bot.card(f"go-{n:02d}", Phase.PLANNED, (Action.START, By.OWNER, {}))
    await bot.digest.send(time.time() + 1)
    text = (await bot.digests())[0].text
    names = ", ".join(f"go-{n:02d}" for n in range(LISTED))
    assert f"▶️ started: {names} and 3 more" in text.splitlines()


async def test_a_restart_after_the_due_time_sends_it_once(database, tmp_path: Path) -> None:
    clock = Clock(local(0, 9, 40))
    first = await Bot(database, tmp_path, clock).open()
    try:
        # Down at 09:00, up at 09:40: sent at once.
        assert await first.digest.tick(clock.now) == local(1, 9)
        assert len(await first.digests()) == len(ROOMS)
    finally:
        await first.close()
    clock.now = local(0, 9, 45)
    again = await Bot(database, tmp_path, clock).open()
    try:
        assert await again.digest.tick(clock.now) == local(1, 9)
        assert await again.digest.send(clock.now) == 0
        assert len(await again.digests()) == len(ROOMS)
    finally:
        await again.close()


async def test_a_restart_before_the_due_time_waits_for_it(database, tmp_path: Path) -> None:
    clock = Clock(local(0, 9, 5))
    first = await Bot(database, tmp_path, clock).open()
    try:
        await first.digest.tick(clock.now)
    finally:
        await first.close()
    clock.now = local(1, 8)
    again = await Bot(database, tmp_path, clock).open()
    try:
        assert await again.digest.tick(clock.now) == local(1, 9)
        assert len(await again.digests()) == len(ROOMS)  # only yesterday's
        assert await again.digest.tick(local(1, 9)) == local(2, 9)
        assert len(await again.digests()) == 2 * len(ROOMS)
    finally:
        await again.close()


async def test_the_loop_sleeps_until_the_next_due_time(bot) -> None:
    bot.clock.now = local(0, 8, 30)
    stop = asyncio.Event()
    slept: list[float] = []

    async def sleep(seconds: float, _stop: asyncio.Event) -> None:
        slept.append(seconds)
        bot.clock.now += seconds
        if len(slept) == 3:
            stop.set()

    bot.digest.sleep = sleep
    await bot.digest.run(stop)
    # To 09:00; sent then; then at most an hour at a time towards tomorrow's.
    assert slept == [1800.0, MAX_SLEEP_S, MAX_SLEEP_S]
    assert len(await bot.digests()) == len(ROOMS)


async def test_two_processes_send_one_digest(database, tmp_path: Path) -> None:
    clock = Clock(local(0, 9, 1))
    one = await Bot(database, tmp_path / "one", clock).open()
    two = await Bot(database, tmp_path / "two", clock).open()
    try:
        sent = await asyncio.gather(one.digest.send(clock.now), two.digest.send(clock.now))
        assert sorted(sent) == [0, len(ROOMS)]
        assert len(await one.digests()) == len(ROOMS)
    finally:
        await one.close()
        await two.close()


async def test_a_failure_while_writing_the_posts_claims_nothing(bot, monkeypatch) -> None:
    """The claim and the posts land together: a crash between them must not skip the day."""
    real = chat_store.enqueue
    calls = []

    async def broken(db, post):  # noqa: ANN001 - as chat_store.enqueue
        calls.append(post)
        if len(calls) == 2:
            raise OSError("disk gone")
        return await real(db, post)

    monkeypatch.setattr(chat_store, "enqueue", broken)
    with pytest.raises(OSError):
        await bot.digest.tick(local(0, 9))
    assert await bot.digests() == []
    assert await bot.digest.tick(local(0, 9, 5)) == local(1, 9)
    assert len(await bot.digests()) == len(ROOMS)


def test_every_kind_of_waiting_has_its_line() -> None:
    kinds = {v for k, v in vars(InboxKind).items() if not k.startswith("_")}
    for locale in ("en", "de"):
        assert all(f"digest_wait_{kind}" in TEXTS[locale] for kind in kinds), locale


async def test_quiet_hours_do_not_hold_it_and_it_mentions_nobody(database, tmp_path) -> None:
    clock = Clock(local(0, 9))
    quiet = QuietHours.parse("22:00-10:00")
    bot = await Bot(database, tmp_path, clock, quiet=quiet).open()
    try:
        await bot.ask("asked")
        assert quiet.is_quiet(clock.now)
        await bot.digest.tick(clock.now)
        posts = await bot.digests()
        assert len(posts) == len(ROOMS) and all(p.mentions == () for p in posts)
    finally:
        await bot.close()


async def test_german(database, tmp_path: Path) -> None:
    bot = await Bot(database, tmp_path, Clock(local(0, 12)), locale="de").open()
    try:
        # Yesterday's: the busy board below is made now, after it, at any time of day.
        first = local(-1, 9)
        await bot.digest.tick(first)
        [quiet, _] = await bot.digests()
        assert (
            quiet.text == f"📰 Seit {shown(first - 86400)} hat sich nichts bewegt; nichts wartet."
        )
        async with bot.store.transaction() as db:
            await db.execute("UPDATE digests SET last_day = ''")
        await busy_board(bot)
        await bot.digest.send(time.time() + 1)
        text = (await bot.digests())[-1].text
        assert "🔀 11 Schritte auf 5 Karten." in text
        assert "✅ fertig: shipped (bereit_fuer_deployment)" in text
        assert "▶️ gestartet: begun" in text
        assert "📥 Wartet auf dich: 2; das Älteste seit" in text
        assert "❓ asked fragt: Which storage? — antworte darauf oder /answer asked <text>" in text
        assert "💸 Ausgegeben: $1.25 für 1 Lauf. Heute: $1.25 von $20.00." in text
        assert "- broken: builder fehlgeschlagen: tests broke — /retry broken, /fix broken" in text
        assert "- recovered: builder fehlgeschlagen: flaky; jetzt in_umsetzung" in text
    finally:
        await bot.close()


async def test_a_spent_day_budget_says_so(bot) -> None:
    card = await bot.card("costly", Phase.PLANNED)
    await bot.spend(card, 25.0)
    await bot.digest.send(time.time() + 1)
    text = (await bot.digests())[0].text
    assert (
        "💸 Spent $25.00 in 1 run. Today's budget is spent ($25.00 of $20.00): "
        "runs wait for tomorrow, or /allow."
    ) in text


@pytest.mark.parametrize("value", ["9am", "25:00", "9:00", "09:00-10:00", "09:60", 9])
def test_a_bad_digest_at_is_one_clear_line(tmp_path: Path, value) -> None:
    shown_value = f'"{value}"' if isinstance(value, str) else str(value)
    text = MINIMAL_CONFIG.replace('repo = "repo"', f'repo = "repo"\ndigest_at = {shown_value}')
    with pytest.raises(ConfigError) as caught:
        parse_config(text, tmp_path / "bot.toml")
    message = str(caught.value)
    assert "bot.digest_at" in message and "\n" not in message.strip()
    if isinstance(value, str):
        assert 'not a time like "09:00"' in message
    assert "Traceback" not in message


def test_unset_means_no_digest_and_check_says_both(tmp_path: Path) -> None:
    config = parse_config(MINIMAL_CONFIG, tmp_path / "bot.toml")
    assert config.bot.digest_at is None
    assert check.digest_line(config).startswith("digest: off (set bot.digest_at")
    text = MINIMAL_CONFIG.replace('repo = "repo"', 'repo = "repo"\ndigest_at = "07:30"')
    config = parse_config(text, tmp_path / "bot.toml")
    assert config.bot.digest_at == "07:30"
    assert check.digest_line(config).startswith("digest: daily at 07:30 (")


# The demo board's /status answer: "3 cards".
STATUS_ANSWER = r"^\d+ cards"


def demo_with(tmp_path: Path, digest_at: str | None):
    config = demo.config(tmp_path)
    bot = config.bot.model_copy(update={"digest_at": digest_at})
    return config.model_copy(update={"bot": bot})


async def _serve(config, until: str) -> tuple[list[str], int]:
    """The console demo served until a line matching `until` came: the lines shown, and
    the digests the outbox holds."""
    seen: list[str] = []
    async with serving(config) as (console, running):
        await console.push("/status")
        async with asyncio.timeout(30):
            while not seen or not re.search(until, seen[-1]):
                seen.append((await console.pop(30)).text)
        rows = await running.store.reader.fetchall(
            "SELECT count(*) FROM outbox WHERE purpose = 'digest'"
        )
    return seen, rows[0][0]


async def test_the_running_bot_posts_it_when_set(tmp_path: Path) -> None:
    # 00:00 has passed today whenever the test runs: due at once.
    seen, digests = await _serve(demo_with(tmp_path, "00:00"), "^📰")
    assert seen[-1].startswith(("📰 Nothing moved since", "📰 Since")), seen
    assert digests == 1


async def test_the_running_bot_posts_none_when_unset(tmp_path: Path) -> None:
    seen, digests = await _serve(demo_with(tmp_path, None), STATUS_ANSWER)
    assert not any(line.startswith("📰") for line in seen)
    assert digests == 0
