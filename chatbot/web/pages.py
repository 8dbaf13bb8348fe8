"""The board and runs pages, the page frame and the short error pages.

Every page is whole HTML that reads without JavaScript; the script only keeps it
current. Pages carry the board's change mark (`data-mark`), so the script's
event stream starts exactly where the page was read and misses nothing.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence

from chatbot.board.web_reads import BoardCard, DayRuns, JobLine, WorkerLine
from chatbot.domain.counted import counted
from chatbot.domain.phases import Kind, Phase
from chatbot.web.board_acts import CardActs
from chatbot.web.chart import runs_chart
from chatbot.web.groups import SHOWN, Group
from chatbot.web.markup import Safe, age, esc, join, scroll_table, since, tag
from chatbot.web.texts import Texts

# Longest question text on a board card; the card page shows all of it.
QUESTION_ON_CARD = 160
CHART_DAYS = 14
# The runs page lists the workers seen in this long (as `chatbot check` does).
WORKERS_SEEN_S = 24 * 3600


def frame(
    t: Texts,
    *,
    title: str,
    main: Safe,
    view: str,
    mark: str = "",
    slug: str = "",
    static_version: str = "",
    owner_bar: Safe | None = None,
) -> Safe:
    """The page around `main`: one stylesheet, two deferred scripts (the live board, and
    times in the reader's time zone), nothing inline. A signed-in owner's bar (board_acts)
    goes outside `main`, which the script reads again."""
    return tag(
        "<!doctype html>\n"
        '<html lang="{lang}"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="referrer" content="no-referrer">'
        "<title>{title}</title>"
        '<link rel="icon" href="/static/icon.svg?v={v}" type="image/svg+xml">'
        '<link rel="stylesheet" href="/static/board.css?v={v}">'
        '<script src="/static/board.js?v={v}" defer></script>'
        '<script src="/static/times.js?v={v}" defer></script>'
        "</head>"
        '<body data-view="{view}" data-mark="{mark}" data-slug="{slug}" data-units="{units}"'
        ' data-live-on="{live_on}" data-live-off="{live_off}"{owner}>'
        '<header class="top"><nav><a href="/">{nav_board}</a><a href="/runs">{nav_runs}</a>'
        '<a href="/budget">{nav_budget}</a><a href="/routines">{nav_routines}</a>'
        '<a href="/cards">{nav_cards}</a></nav>'
        '<span id="live" class="live" hidden></span></header>{owner_bar}'
        '<main id="main">{main}</main></body></html>\n',
        lang=t.locale,
        title=title,
        v=static_version,
        view=view,
        mark=mark,
        slug=slug,
        units=json.dumps(t.units, ensure_ascii=False),
        live_on=t("live_on"),
        live_off=t("live_off"),
        nav_board=t("nav_board"),
        nav_runs=t("nav_runs"),
        nav_budget=t("nav_budget"),
        nav_routines=t("nav_routines"),
        nav_cards=t("nav_cards"),
        main=main,
        owner=Safe(" data-owner" if owner_bar is not None else ""),
        owner_bar=owner_bar or Safe(""),
    )


class CardItems:
    """Renders cards for the board, and for the event stream when they change.

    A board may hold ten thousand cards: what many cards share (phase labels, lanes,
    the sentences around an age) is escaped once here, and each card costs one
    string. Values from the card itself are escaped as they go in.
    """

    def __init__(self, t: Texts):
        self.t = t
        self._units = {unit: esc(text) for unit, text in t.units.items()}
        self._labels = {phase: esc(phase.label(t.locale)) for phase in Phase}
        self._lanes: dict[str, Safe] = {}
        self._ages = {
            key: tuple(esc(part) for part in t(key, age="\0").split("\0", 1))
            for key in ("job_running", "job_queued", "moved_since")
        }
        self._question = esc(t("question"))
        self._acts = CardActs(t)

    def _lane(self, lane: str) -> Safe:
        found = self._lanes.get(lane)
        if found is None:
            found = self._lanes[lane] = esc(self.t("lane", lane=lane))
        return found

    def __call__(self, card: BoardCard, now: float | None = None, acts: bool = False) -> Safe:
        """A card as the board shows it; with `acts`, a waiting card's buttons (hidden on a
        reader's page: the live events bring every page this same markup)."""
        now = time.time() if now is None else now
        if card.job_state and card.job_since:
            key = "job_running" if card.job_state == "running" else "job_queued"
            at = card.job_since
        else:
            key, at = "moved_since", card.moved_at
        before, after = self._ages[key]
        meta: str = self._labels[card.phase]
        if card.phase is Phase.SPLIT and card.children:
            # Not work under way: its children are, and it waits for them.
            done, total = card.children_done, card.children
            meta += " · " + esc(self.t("split_waits", done=done, total=total))
        if card.lane:
            meta += " · " + self._lane(card.lane)
        meta += f' · {before}<time data-since="{at:.0f}">{age(now - at, self._units)}</time>{after}'
        question = ""
        if card.question:
            text = card.question
            if len(text) > QUESTION_ON_CARD:
                text = text[: QUESTION_ON_CARD - 1] + "…"
            options = ""
            if card.options:
                items = "".join(f"<li>{esc(option)}</li>" for option in card.options)
                options = f'<ol class="options">{items}</ol>'
            question = (
                f'<div class="question"><span class="qlabel">{self._question}</span> '
                f"{esc(text)}{options}</div>"
            )
        slug = esc(card.slug)
        kind = " kind-research" if card.kind is Kind.RESEARCH else ""
        return Safe(
            f'<li class="card{kind}" id="card-{slug}"><a class="slug" href="/card/{slug}">'
            f'{slug}</a><span class="title">{esc(card.title)}</span>'
            f'<span class="meta">{meta}</span>{question}{self._acts(card) if acts else ""}</li>'
        )


def requests_line(count: int, t: Texts) -> Safe:
    """How many requesters' requests wait, under "Waiting for you" (whose count holds
    them): only the number, as a reader's page never shows the inbox's words or names."""
    return tag(
        '<p class="requests" id="requests"{hidden}>{text}</p>',
        hidden=Safe("" if count else " hidden"),
        text=t("requests_waiting", n=count),
    )


def board_main(
    columns: Mapping[Group, Sequence[BoardCard]],
    counts: dict[Group, int],
    items: CardItems,
    now: float | None = None,
    acts: bool = False,
    *,
    total: int | None = None,
    requests: int = 0,
) -> Safe:
    """Every group with its count and its most recent cards (SHOWN; the page's script
    keeps to that many: `data-cap`), and a link to the rest on /cards, hidden while
    there is no rest (the script shows it when the count outgrows the column).
    "Waiting for you" counts the inbox's items, the `requests` among them too, which it
    says after its cards; `total` is the board's cards."""
    now = time.time() if now is None else now
    t = items.t
    total = sum(counts.values()) if total is None else total
    sections = []
    for group in Group:
        cap = SHOWN[group]
        more = tag(
            '<a class="more" href="/cards?group={group}"{hidden}>{text}</a>',
            group=group.value,
            hidden=Safe("" if counts.get(group, 0) > cap else " hidden"),
            text=t("all_cards"),
        )
        loose = requests_line(requests, t) if group is Group.WAITING else Safe("")
        sections.append(
            tag(
                '<section class="column" id="group-{group}" aria-labelledby="h-{group}">'
                '<h2 id="h-{group}">{name} <span class="count" id="count-{group}">{count}</span>'
                '</h2><ul class="cards" id="col-{group}" data-empty="{empty}" data-cap="{cap}">'
                "{items}</ul>{loose}{more}</section>",
                group=group.value,
                name=t(f"group_{group.value}"),
                count=counts.get(group, 0),
                empty=t("column_empty"),
                cap=cap,
                items=join(items(card, now, acts) for card in columns.get(group, ())),
                loose=loose,
                more=more,
            )
        )
    return tag(
        '<h1>{title} <small id="total" data-total="{total}" data-one="{one}" data-many="{many}">'
        '{total_text}</small></h1><div class="board">{columns}</div>',
        title=t("title"),
        total=total,
        total_text=t("cards_total", n=counted(total, "card", t.locale)),
        one=t("cards_total", n=counted(1, "card", t.locale)),
        many=t("cards_total", n=counted(2, "card", t.locale)),
        columns=join(sections),
    )


def runs_main(
    jobs: Sequence[JobLine],
    days: Sequence[DayRuns],
    t: Texts,
    now: float | None = None,
    workers: Sequence[WorkerLine] = (),
) -> Safe:
    now = time.time() if now is None else now
    if jobs:
        rows = []
        for line in jobs:
            job = line.job
            started = job.started_at if job.state.value == "running" else None
            card = tag('<a href="/card/{s}">{s}</a>', s=line.slug) if line.slug else esc("-")
            rows.append(
                tag(
                    "<tr><td>#{id}</td><td>{card}</td><td>{kind}</td><td>{lane}</td>"
                    '<td class="state-{state}">{state}</td><td>{age}</td><td>{attempts}</td>'
                    "<td>{host}</td></tr>",
                    id=job.id,
                    card=card,
                    kind=job.kind,
                    lane=job.lane,
                    state=job.state.value,
                    age=since(started or job.created_at, t.units, now),
                    attempts=job.attempts,
                    host=(job.host or "-") if started else "-",
                )
            )
        heads = ("col_job", "col_card", "col_kind", "col_lane", "col_state", "col_for")
        keys = (*heads, "col_attempts", "col_host")
        table = scroll_table("jobs", (t(key) for key in keys), rows)
    else:
        table = tag('<p class="none">{text}</p>', text=t("no_jobs"))
    return tag(
        "<h1>{title}</h1>{table}<h2>{workers_title}</h2>{workers}<h2>{chart_title}</h2>{chart}",
        title=t("jobs"),
        table=table,
        workers_title=t("workers", hours=WORKERS_SEEN_S // 3600),
        workers=workers_table(workers, jobs, t, now),
        chart_title=t("chart", days=counted(CHART_DAYS, "day", t.locale)),
        chart=runs_chart(days, CHART_DAYS, t, now),
    )


def workers_table(
    workers: Sequence[WorkerLine], jobs: Sequence[JobLine], t: Texts, now: float
) -> Safe:
    """The worker processes seen recently, on this host or others, and what each runs."""
    if not workers:
        # Queued jobs wait for a worker: say how to start one.
        return tag('<p class="none">{text}</p>', text=t("no_workers"))
    running: dict[str, int] = {}
    for line in jobs:
        if line.job.state.value == "running" and line.job.lease_owner:
            running[line.job.lease_owner] = running.get(line.job.lease_owner, 0) + 1
    rows = [
        tag(
            "<tr><td>{host}</td><td>{lanes}</td><td>{running}</td>"
            '<td class="worker-{state}">{said}</td><td>{seen}</td><td>{up}</td></tr>',
            host=worker.host,
            lanes=", ".join(worker.lanes) or "-",
            running=running.get(worker.id, 0),
            state="alive" if worker.alive else "gone",
            said=t("worker_alive") if worker.alive else t("worker_gone"),
            seen=since(worker.heartbeat_at, t.units, now),
            up=since(worker.started_at, t.units, now),
        )
        for worker in workers
    ]
    heads = ("col_host", "col_lanes", "col_running", "col_state", "col_seen", "col_up")
    return scroll_table("workers", (t(key) for key in heads), rows)


def message_main(text: str, t: Texts) -> Safe:
    return tag(
        '<h1>{title}</h1><p>{text}</p><p><a href="/">{back}</a></p>',
        title=t("title"),
        text=text,
        back=t("back"),
    )
