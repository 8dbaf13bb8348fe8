"""/metrics: the Prometheus text format over real HTTP, on a real store (SQLite and
PostgreSQL for the gauges read from the database) and a running bot.

Each scrape is parsed with prometheus_client's own parser; values are asserted after
driving real state: jobs queued and claimed, outbox rows pending and given up, an open
question, worker heartbeats, a whole demo pipeline with its runs and commands.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from pathlib import Path

import aiohttp
import pytest
from prometheus_client.parser import text_string_to_metric_families

from chatbot.app import demo
from chatbot.app.serve import work
from chatbot.app.startup import running_bot
from chatbot.board import BoardService, Post, RunRecord
from chatbot.config import WebSection
from chatbot.domain.phases import Kind, Phase
from chatbot.store import Store
from chatbot.store import cards as card_store
from chatbot.store import chat as chat_store
from chatbot.store import comments as comment_store
from chatbot.store import jobs as job_store
from chatbot.store import questions as question_store
from chatbot.store import talk as talk_store
from chatbot.store import workers as worker_store
from chatbot.transports.console import ConsoleTransport
from chatbot.web import WebSettings
from chatbot.web.metrics import ARRIVAL_KEEP_S, CommandLatency, Metrics
from chatbot.web.metrics_http import MetricsDoor, MetricsListener
from chatbot.web.server import WebBoard
from tests.demo.serving import said, serving
from tests.web.test_restart import free_port

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def parse(text: str) -> Samples:
    found: Samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples[(name, tuple(sorted(labels.items())))]


def series(samples: Samples, name: str) -> dict[tuple[tuple[str, str], ...], float]:
    return {labels: v for (n, labels), v in samples.items() if n == name}


async def scrape(url: str, token: str | None) -> tuple[int, str, aiohttp.typedefs.LooseHeaders]:
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    async with aiohttp.ClientSession() as session, session.get(url, headers=headers) as response:
        return response.status, await response.text(), response.headers


@pytest.fixture
async def store(database):
    opened = await Store.open(database.value, password_file=database.password_file)
    yield opened
    await opened.close()


@pytest.fixture
def board(store: Store, tmp_path: Path) -> BoardService:
    repo = tmp_path / "repo"
    (repo / "docs" / "intent").mkdir(parents=True)
    return BoardService(store, repo)


async def _card(store: Store, slug: str) -> int:
    async with store.transaction() as db:
        card = await card_store.create(db, slug, Kind.INTENT, Phase.PLANNED, actor="test")
    return card.id


async def _backdate(store: Store, table: str, seconds: float) -> None:
    # Ages are now minus a row's time: rows made a moment ago would show ~0.
    async with store.transaction() as db:
        await db.execute(f"UPDATE {table} SET created_at = created_at - ?", (seconds,))


async def test_gauges_come_from_the_database(store: Store, board: BoardService) -> None:
    async with store.transaction() as db:
        for slug, lane, kind in [
            ("one", "light", "builder"),
            ("two", "light", "builder"),
            ("three", "light", "reviewer"),
            ("four", "heavy", "builder"),
        ]:
            card = await card_store.create(db, slug, Kind.INTENT, Phase.PLANNED, actor="test")
            await job_store.enqueue(db, kind=kind, lane=lane, card_id=card.id)
    await _backdate(store, "jobs", 600)
    # A worker takes the oldest of the light lane: one builder runs, one waits.
    assert await board.queue.claim("light", "w-1", 60.0) is not None
    await board.post_alone(Post(transport="xmpp", target="room@muc.example.org", text="hi"))
    await board.post_alone(Post(transport="xmpp", target="room@muc.example.org", text="lost"))
    await _backdate(store, "outbox", 120)
    lost = (await chat_store.pending(store.reader, "xmpp"))[-1]
    async with store.transaction() as db:
        await chat_store.mark_failed(db, lost, "refused")
        await question_store.ask(db, await _card_id(db, "four"), "operator", "Which way?", [])
        for worker, host in [("w-1", "alpha"), ("w-2", "beta"), ("w-3", "beta")]:
            await worker_store.beat(
                db, worker, host=host, process=None, lanes=["light"], lease_s=60
            )
        await worker_store.stopped(db, ["w-3"])
        # The running builder's agent asks to run something; a second request was decided.
        running = await db.fetchone("SELECT id, card_id FROM jobs WHERE state = 'running'")
        await talk_store.add(db, running[0], running[1], "approval", "curl example.org")
        await talk_store.add(db, running[0], running[1], "approval", "ls", state="allowed")
        # Two line comments not answered yet (one with an agent), one answered.
        for state in ("open", "sent", "answered"):
            await comment_store.add(
                db,
                running[1],
                commit_hash="a" * 40,
                path="x.py",
                lines=(1, 1),
                quote="x",
                body="why?",
                author="xmpp:o@x.org",
            )
            await db.execute(
                "UPDATE line_comments SET state = ? WHERE id = (SELECT max(id) FROM line_comments)",
                (state,),
            )
        await db.execute("UPDATE cards SET phase = 'building' WHERE slug = 'one'")
    await _backdate(store, "questions", 300)

    up = {"xmpp": True, "matrix": False}
    token = secrets.token_urlsafe(24)
    listener = MetricsListener(MetricsDoor(Metrics(board, lambda: up), (token,)), "127.0.0.1", 0)
    assert await listener.start()
    try:
        status, text, headers = await scrape(listener.url, token)
    finally:
        await listener.stop()
    assert status == 200 and headers["Content-Type"].startswith("text/plain; version=0.0.4")
    got = parse(text)

    assert series(got, "intentboard_jobs_queued") == {
        (("lane", "heavy"), ("role", "builder")): 1,
        (("lane", "light"), ("role", "builder")): 1,
        (("lane", "light"), ("role", "reviewer")): 1,
    }
    assert series(got, "intentboard_jobs_running") == {
        (("lane", "heavy"), ("role", "builder")): 0,
        (("lane", "light"), ("role", "builder")): 1,
        (("lane", "light"), ("role", "reviewer")): 0,
    }
    assert value(got, "intentboard_jobs_oldest_queued_age_seconds", lane="heavy") >= 600
    assert value(got, "intentboard_outbox_pending_messages", transport="xmpp") == 1
    assert value(got, "intentboard_outbox_oldest_pending_age_seconds", transport="xmpp") >= 120
    assert value(got, "intentboard_outbox_given_up_messages", transport="xmpp") == 1
    # A transport with nothing waiting still says so (an alert wants the 0).
    assert value(got, "intentboard_outbox_pending_messages", transport="matrix") == 0
    assert value(got, "intentboard_outbox_oldest_pending_age_seconds", transport="matrix") == 0
    assert value(got, "intentboard_questions_open") == 1
    assert value(got, "intentboard_questions_oldest_open_age_seconds") >= 300
    assert series(got, "intentboard_workers_alive") == {
        (("host", "alpha"),): 1,
        (("host", "beta"),): 1,
    }
    # Cards per phase: every phase, with its 0 (an alert wants the 0 too).
    assert value(got, "intentboard_cards", phase="planned") == 3
    assert value(got, "intentboard_cards", phase="building") == 1
    assert value(got, "intentboard_cards", phase="deployed") == 0
    assert value(got, "intentboard_approvals_open") == 1
    assert value(got, "intentboard_comments_open") == 2
    # No `_created` series beside the counters and histograms.
    assert "_created" not in text
    assert series(got, "intentboard_transport_connected") == {
        (("transport", "matrix"),): 0,
        (("transport", "xmpp"),): 1,
    }


async def _card_id(db, slug: str) -> int:
    row = await db.fetchone("SELECT id FROM cards WHERE slug = ?", (slug,))
    return row[0]


async def test_every_process_reports_the_same_queue(
    store: Store, board: BoardService, database
) -> None:
    """Two processes' stores on one database (on PostgreSQL: as on two hosts): a job one
    queues and the other claims shows the same in both processes' /metrics."""
    other = await Store.open(database.value, password_file=database.password_file)
    try:
        card = await _card(store, "shared")
        async with store.transaction() as db:
            await job_store.enqueue(db, kind="operator", lane="light", card_id=card)
        mine = Metrics(board)
        theirs = Metrics(BoardService(other, board.repo))
        for metrics in (mine, theirs):
            got = parse((await metrics.exposition())[0].decode())
            assert value(got, "intentboard_jobs_queued", lane="light", role="operator") == 1
        assert await BoardService(other, board.repo).queue.claim("light", "w-9", 60.0) is not None
        for metrics in (mine, theirs):
            got = parse((await metrics.exposition())[0].decode())
            assert value(got, "intentboard_jobs_queued", lane="light", role="operator") == 0
            assert value(got, "intentboard_jobs_running", lane="light", role="operator") == 1
    finally:
        await other.close()


@pytest.mark.sqlite_only
async def test_the_board_listener_wants_a_token_and_never_logs_it(
    store: Store, board: BoardService, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    board_token, metrics_token = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
    door = MetricsDoor(Metrics(board), (metrics_token, board_token))
    site = WebBoard(board, WebSettings("127.0.0.1", 0, board_token), metrics=door)
    await site.start()
    url = site.url + "metrics"
    try:
        status, text, headers = await scrape(url, None)
        assert status == 401 and headers["WWW-Authenticate"].startswith("Bearer")
        assert "intentboard_" not in text and "Bearer <token>" in text
        wrong = metrics_token[:-1] + ("x" if metrics_token[-1] != "x" else "y")
        status, text, headers = await scrape(url, wrong)
        assert status == 401 and "WWW-Authenticate" in headers
        status, text, _ = await scrape(url, metrics_token)
        assert status == 200 and "intentboard_jobs_queued" in text
        status, text, _ = await scrape(url, board_token)
        assert status == 200 and "intentboard_questions_open 0.0" in text
        # The metrics token opens nothing else of the board.
        status, _, _ = await scrape(site.url, metrics_token)
        assert status == 401
        async with aiohttp.ClientSession() as session:
            headers = {"Authorization": f"Bearer {metrics_token}"}
            async with session.post(url, headers=headers) as response:
                assert response.status == 401  # the board's answer: nothing is written
    finally:
        await site.stop()
    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert metrics_token not in logged and wrong not in logged and board_token not in logged


async def answered(console: ConsoleTransport, event, within: float = 30.0) -> None:
    """Until the console shows the bot's answer to `event`."""
    number = event.envelope.message_id.rsplit(".", 1)[1]
    async with asyncio.timeout(within):
        while (await console.pop(within)).reply_to != number:
            pass


def _config(tmp_path: Path, **web: object):
    """The console demo (scripted agents) in tmp_path, with a [web] section."""
    token_file = tmp_path / "web-token"
    token_file.write_text(secrets.token_urlsafe(24) + "\n")
    metrics_file = tmp_path / "metrics-token"
    metrics_file.write_text(secrets.token_urlsafe(24) + "\n")
    section = WebSection(token_file=token_file, metrics_token_file=metrics_file, **web)
    return demo.config(tmp_path).model_copy(update={"web": section})


@pytest.mark.sqlite_only
async def test_a_running_bot_counts_runs_and_command_latency(tmp_path: Path) -> None:
    """serve() wires it all: the demo's pipeline runs (operator, builder, reviewer) land in
    the duration histogram and the token and cost counters; each command typed at the
    console is timed from its arrival to its answer's hand-off to the console."""
    board_port, metrics_port = free_port(), free_port()
    config = _config(
        tmp_path, listen=f"127.0.0.1:{board_port}", metrics_listen=f"127.0.0.1:{metrics_port}"
    )
    assert config.web is not None and config.web.metrics_token_file is not None
    token = config.web.metrics_token_file.read_text().strip()
    async with serving(config) as (console, bot):
        await console.push("/start hello-endpoint")
        await said(console, r"review approve")
        status = await console.push("/status")
        await answered(console, status)
        on_board = await scrape(f"http://127.0.0.1:{board_port}/metrics", token)
        alone = await scrape(f"http://127.0.0.1:{metrics_port}/metrics", token)
    assert on_board[0] == alone[0] == 200
    got = parse(on_board[1])
    runs = series(got, "intentboard_job_duration_seconds_count")
    roles = {dict(labels)["role"] for labels in runs}
    assert {"operator", "builder", "reviewer"} <= roles, runs
    assert all(dict(labels)["outcome"] == "ok" for labels in runs)
    builder = next(labels for labels in runs if dict(labels)["role"] == "builder")
    runtime = dict(builder)["runtime"]
    assert value(got, "intentboard_run_input_tokens_total", role="builder", runtime=runtime) > 0
    assert value(got, "intentboard_run_output_tokens_total", role="builder", runtime=runtime) > 0
    assert ("intentboard_run_cost_usd_total", (("role", "builder"), ("runtime", runtime))) in got
    # Both commands were answered: two observations, each a real, finite time.
    assert value(got, "intentboard_command_latency_seconds_count", transport="console") == 2
    assert (
        value(got, "intentboard_command_latency_seconds_bucket", transport="console", le="+Inf")
        == 2
    )
    assert value(got, "intentboard_transport_connected", transport="console") == 1
    # The listener of its own serves the same registry.
    assert "intentboard_command_latency_seconds_count" in alone[1]


@pytest.mark.sqlite_only
async def test_a_worker_serves_metrics_listen_without_the_board(tmp_path: Path) -> None:
    port = free_port()
    config = _config(tmp_path, board=False, metrics_listen=f"127.0.0.1:{port}")
    assert config.web is not None and config.web.metrics_token_file is not None
    token = config.web.metrics_token_file.read_text().strip()
    stop = asyncio.Event()
    async with running_bot(config, chat=False) as bot:
        working = asyncio.create_task(work(bot, stop, until_idle=False))
        try:
            url = f"http://127.0.0.1:{port}/metrics"
            async with asyncio.timeout(10):
                while True:
                    try:
                        status, text, _ = await scrape(url, token)
                        break
                    except aiohttp.ClientConnectionError:
                        await asyncio.sleep(0.05)  # not listening yet: poll its port
            refused = await scrape(url, None)
        finally:
            stop.set()
            await working
    assert status == 200
    # The worker registered itself: its host counts one live worker.
    assert sum(series(parse(text), "intentboard_workers_alive").values()) == 1
    assert refused[0] == 401


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.sqlite_only
async def test_latency_counts_each_message_once_and_forgets_unanswered_ones(
    board: BoardService,
) -> None:
    metrics = Metrics(board)
    clock = Clock()
    latency = CommandLatency(metrics.command_latency, clock)
    latency.arrived("xmpp", "m-1")
    latency.arrived("xmpp", "chatter")  # never answered
    clock.now += 0.3
    latency.handed("xmpp", None)  # a notice replies to nothing
    latency.handed("matrix", "m-1")  # same id, another network: not its answer
    latency.handed("xmpp", "m-1")
    latency.handed("xmpp", "m-1")  # a second post replying to it: counted once
    got = parse((await metrics.exposition())[0].decode())
    assert value(got, "intentboard_command_latency_seconds_count", transport="xmpp") == 1
    assert value(got, "intentboard_command_latency_seconds_sum", transport="xmpp") == pytest.approx(
        0.3
    )
    assert (
        value(got, "intentboard_command_latency_seconds_bucket", transport="xmpp", le="0.25") == 0
    )
    assert value(got, "intentboard_command_latency_seconds_bucket", transport="xmpp", le="0.5") == 1
    # Room talk that is never answered is forgotten after an hour, not kept for good.
    clock.now += ARRIVAL_KEEP_S + 1
    latency.arrived("xmpp", "m-2")
    assert latency.waiting == 1


@pytest.mark.sqlite_only
async def test_a_failed_runs_reason_is_not_a_label(board: BoardService) -> None:
    metrics = Metrics(board)
    card = await board.reads.card_by_id(await _card(board.store, "runs"))
    common = dict(
        role="builder",
        runtime="codex",
        configured_model="m",
        actual_model=None,
        reasoning_effort="low",
        cached_tokens=None,
        cost_usd=None,
        turns=None,
        session_id=None,
    )
    await metrics.run_finished(
        card,
        RunRecord(
            **common,
            input_tokens=None,
            output_tokens=None,
            duration_s=42.0,
            outcome="codex: exited 1: the model said no",
        ),
    )
    await metrics.run_finished(
        card, RunRecord(**common, input_tokens=10, output_tokens=3, duration_s=2.0, outcome="ok")
    )
    got = parse((await metrics.exposition())[0].decode())
    runs = series(got, "intentboard_job_duration_seconds_count")
    assert runs == {
        (("outcome", "failed"), ("role", "builder"), ("runtime", "codex")): 1,
        (("outcome", "ok"), ("role", "builder"), ("runtime", "codex")): 1,
    }
    assert value(got, "intentboard_run_input_tokens_total", role="builder", runtime="codex") == 10
    assert value(got, "intentboard_run_cost_usd_total", role="builder", runtime="codex") == 0
