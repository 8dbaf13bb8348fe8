"""The bot's Prometheus metrics: one registry per process, what it counts and what it reads.

A registry of its own (never prometheus_client's global one): tests and several bots in
one process would otherwise count into each other. Two kinds of value:

- counted here, as things happen in this process: each model run's duration, tokens and
  cost (it hears the worker's `RunFinished`), and a command's latency (`CommandLatency`);
- read from the database at each scrape (`BoardCollector`, through the board's
  `metrics_reads`): the queue per lane and role, the outbox, open questions, workers per
  host. With PostgreSQL and several processes each serves its own /metrics, and these
  are the same in all of them.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Iterator

from prometheus_client import CollectorRegistry, Counter, Histogram, disable_created_metrics
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.exposition import choose_encoder
from prometheus_client.registry import Collector

from chatbot.board import Card, RunRecord
from chatbot.board.metrics_reads import MetricsSnapshot, OutboxState, metrics_snapshot
from chatbot.board.reads import BoardReads
from chatbot.board.routines import OUTCOMES as ROUTINE_OUTCOMES
from chatbot.board.run_events import ChecksFinished, RunEvent, RunFinished
from chatbot.domain.phases import Phase

PREFIX = "intentboard_"
# Agent runs last seconds to hours.
RUN_BUCKETS = (1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200)
# A command's answer: well under a second when all is well, minutes when a server is away.
LATENCY_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300)
# A chat message that gets no answer (talk in the room) is forgotten after this long or
# once this many wait: the map of arrivals stays small whatever the room says.
ARRIVAL_KEEP_S = 3600.0
ARRIVAL_KEEP = 4096

TransportsUp = Callable[[], dict[str, bool]]


def outcome_label(record: RunRecord) -> str:
    """ok, interrupted or failed: a failed run's outcome is its reason in words, which
    would make a time series of every distinct message."""
    return record.outcome if record.outcome in ("ok", "interrupted") else "failed"


class CommandLatency:
    """From a chat message's arrival at the chat intake to the hand-off of the first
    outbox row that replies to it to the message's transport (the outbox sender's send
    returned: the server took it). Messages are matched by transport and message id,
    which every answer names as the message it replies to."""

    def __init__(self, histogram: Histogram, clock: Callable[[], float] = time.monotonic):
        self.histogram = histogram
        self.clock = clock
        self._arrived: OrderedDict[tuple[str, str], float] = OrderedDict()

    def arrived(self, transport: str, message_id: str) -> None:
        now = self.clock()
        self._arrived.pop((transport, message_id), None)
        self._arrived[(transport, message_id)] = now
        while self._arrived:
            key, at = next(iter(self._arrived.items()))
            if len(self._arrived) <= ARRIVAL_KEEP and now - at <= ARRIVAL_KEEP_S:
                break
            del self._arrived[key]

    def handed(self, transport: str, reply_to: str | None) -> None:
        if reply_to is None:
            return
        at = self._arrived.pop((transport, reply_to), None)
        if at is not None:
            self.histogram.labels(transport).observe(max(0.0, self.clock() - at))

    @property
    def waiting(self) -> int:
        return len(self._arrived)


class BoardCollector(Collector):
    """The gauges read at scrape time. `collect` is synchronous (prometheus_client calls
    it); the endpoint awaits `refresh` just before it renders, with no await between."""

    def __init__(self, board: BoardReads, transports_up: TransportsUp):
        self.board = board
        self.transports_up = transports_up
        self.snapshot: MetricsSnapshot | None = None

    async def refresh(self) -> None:
        self.snapshot = await metrics_snapshot(self.board)

    def collect(self) -> Iterator[Metric]:
        up = self.transports_up()
        connected = _gauge(
            "transport_connected", "1 while the chat transport is connected, else 0", "transport"
        )
        for name, online in sorted(up.items()):
            connected.add_metric([name], 1.0 if online else 0.0)
        yield connected
        if self.snapshot is not None:
            yield from _database(self.snapshot, up)


def _gauge(name: str, text: str, *labels: str) -> GaugeMetricFamily:
    return GaugeMetricFamily(PREFIX + name, text, labels=list(labels))


def _database(snap: MetricsSnapshot, up: dict[str, bool]) -> Iterator[Metric]:
    queued = _gauge("jobs_queued", "Jobs waiting for a worker (whole database)", "lane", "role")
    running = _gauge("jobs_running", "Jobs a worker runs now (whole database)", "lane", "role")
    # Both series for every pair with either: "queued > 0 and running == 0" needs the 0.
    for (lane, role), counts in sorted(snap.jobs.items()):
        queued.add_metric([lane, role], counts.queued)
        running.add_metric([lane, role], counts.running)
    oldest = _gauge("jobs_oldest_queued_age_seconds", "Age of the lane's oldest queued job", "lane")
    for lane, queued_at in sorted(snap.oldest_queued_at.items()):
        oldest.add_metric([lane], max(0.0, snap.at - queued_at))
    yield from (queued, running, oldest)

    pending = _gauge("outbox_pending_messages", "Posts waiting in the outbox", "transport")
    age = _gauge(
        "outbox_oldest_pending_age_seconds", "Age of the oldest post waiting (0: none)", "transport"
    )
    failed = _gauge(
        "outbox_given_up_messages",
        "Posts given up after their tries, kept 30 days",
        "transport",
    )
    for transport in sorted(set(up) | set(snap.outbox)):
        box = snap.outbox.get(transport, OutboxState())
        pending.add_metric([transport], box.pending)
        first = box.oldest_pending_at
        age.add_metric([transport], 0.0 if first is None else max(0.0, snap.at - first))
        failed.add_metric([transport], box.failed)
    yield from (pending, age, failed)

    yield _value("questions_open", "Questions waiting for an owner's answer", snap.questions_open)
    first = snap.oldest_question_at
    yield _value(
        "questions_oldest_open_age_seconds",
        "Age of the oldest open question (0: none)",
        0.0 if first is None else max(0.0, snap.at - first),
    )
    workers = _gauge(
        "workers_alive", "Worker processes alive, per host (hosts seen this week)", "host"
    )
    for host, alive in sorted(snap.workers_alive.items()):
        workers.add_metric([host], alive)
    yield workers
    cards = _gauge("cards", "Cards per phase (every phase, 0 where there are none)", "phase")
    for phase in Phase:
        cards.add_metric([phase.value], snap.cards.get(phase.value, 0))
    yield cards
    yield _value(
        "approvals_open",
        "Agents' requests to run something, waiting for an owner",
        snap.approvals_open,
    )
    yield _value(
        "comments_open",
        "Owners' line comments on a change that no commit has answered yet",
        snap.comments_open,
    )
    routines = _gauge(
        "routine_runs", "Routines' runs ever, by outcome (every outcome, 0 where none)", "outcome"
    )
    for outcome in ROUTINE_OUTCOMES:
        routines.add_metric([outcome], snap.routine_runs.get(outcome, 0))
    yield routines


def _value(name: str, text: str, value: float) -> GaugeMetricFamily:
    return GaugeMetricFamily(PREFIX + name, text, value=value)


class Metrics:
    """This process's registry; an observer of the worker's runs (`hear`)."""

    def __init__(self, board: BoardReads, transports_up: TransportsUp = dict):
        # No `_created` series beside each counter and histogram: a timestamp per label set
        # that dashboards do not read doubles what every scrape carries.
        disable_created_metrics()  # type: ignore[no-untyped-call]  # prometheus_client leaves it unannotated
        self.registry = CollectorRegistry()
        labels = ("role", "runtime")
        self.run_duration = Histogram(
            PREFIX + "job_duration_seconds",
            "Model runs by how long they took (outcome: ok, interrupted, failed)",
            (*labels, "outcome"),
            buckets=RUN_BUCKETS,
            registry=self.registry,
        )
        self.input_tokens = Counter(
            PREFIX + "run_input_tokens",
            "Input tokens of model runs",
            labels,
            registry=self.registry,
        )
        self.output_tokens = Counter(
            PREFIX + "run_output_tokens",
            "Output tokens of model runs",
            labels,
            registry=self.registry,
        )
        self.cost = Counter(
            PREFIX + "run_cost_usd",
            "What model runs cost, in US dollars (the CLI's figure or the configured prices)",
            labels,
            registry=self.registry,
        )
        self.command_latency = Histogram(
            PREFIX + "command_latency_seconds",
            "A chat message's arrival to its answer's hand-off to the chat transport",
            ("transport",),
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.latency = CommandLatency(self.command_latency)
        # The repository's checks on builders' and fixers' commits, by outcome.
        self.checks = Histogram(
            PREFIX + "checks_duration_seconds",
            "The repository's checks on a commit by how long they took "
            "(verdict: passed, failed, timeout, error, skipped)",
            ("verdict",),
            buckets=RUN_BUCKETS,
            registry=self.registry,
        )
        self.collector = BoardCollector(board, transports_up)
        self.registry.register(self.collector)

    async def hear(self, event: RunEvent) -> None:
        """Counts finished runs and checks; the other events are the rooms' alone."""
        match event:
            case RunFinished(card, record):
                await self.run_finished(card, record)
            case ChecksFinished(card, record):
                await self.checks_finished(card, record)

    async def run_finished(self, card: Card, record: RunRecord) -> None:
        labels = (record.role, record.runtime)
        self.run_duration.labels(*labels, outcome_label(record)).observe(record.duration_s)
        self.input_tokens.labels(*labels).inc(record.input_tokens or 0)
        self.output_tokens.labels(*labels).inc(record.output_tokens or 0)
        self.cost.labels(*labels).inc(record.cost_usd or 0.0)

    async def checks_finished(self, card: Card, record: dict[str, object]) -> None:
        duration = record.get("duration_s")
        seconds = float(duration) if isinstance(duration, int | float) else 0.0
        self.checks.labels(str(record.get("verdict"))).observe(seconds)

    async def exposition(self, accept: str = "") -> tuple[bytes, str]:
        """The exposition in the format the scraper accepts (Prometheus' text format
        0.0.4 unless it asks for another), the database's gauges read now; and its
        content type."""
        encode, content_type = choose_encoder(accept)
        await self.collector.refresh()
        return encode(self.registry), content_type
