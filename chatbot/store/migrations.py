"""Numbered, forward-only schema migrations, registered in order.

SQLite keeps the number of the last applied step in `user_version`, PostgreSQL in
the one-row table `chatbot_schema`; both run the same steps, written once (the
dialect module makes PostgreSQL's DDL of them). Each step
says in a line what it changes; opening the database logs one line of what it did
(created, or migrated from step N) and, at debug level, the line of each step it
runs. A database newer than this code refuses to open instead of being guessed at.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from chatbot.store.routines import OWNER_SETTINGS_STEP, PAUSE_CAUSE_STEP
from chatbot.store.routines import SCHEMA as ROUTINES_SCHEMA


@dataclass(frozen=True)
class Step:
    version: int
    description: str
    sql: str


class Migrations:
    """The registry (mautrix's UpgradeTable idea): steps are numbered 1, 2, 3, ..."""

    def __init__(self) -> None:
        self.steps: list[Step] = []

    def register(self, version: int, description: str, sql: str) -> None:
        if version != len(self.steps) + 1:
            raise ValueError(f"migration {version} registered after {len(self.steps)}")
        self.steps.append(Step(version, description, sql))

    @property
    def latest(self) -> int:
        return len(self.steps)

    @staticmethod
    def statements(step: Step) -> list[str]:
        """The step's statements one by one, so a step and its version land together."""
        statements: list[str] = []
        buffer = ""
        for line in step.sql.splitlines(keepends=True):
            if line.strip().startswith("--"):
                continue
            buffer += line
            if sqlite3.complete_statement(buffer):
                statements.append(buffer.strip())
                buffer = ""
        if buffer.strip():
            statements.append(buffer.strip())
        return statements


def summary(name: str, before: int, after: int) -> str | None:
    """The one line at INFO level for opening a database at step `before`, left at
    step `after`; None when nothing ran. The steps themselves are debug output: a
    new user's first command should not open with a screen of them."""
    if after == before:
        return None
    if before == 0:
        return f"database {name} created at schema step {after}"
    return f"database {name} migrated from schema step {before} to {after}"


MIGRATIONS = Migrations()

MIGRATIONS.register(
    1,
    "board, jobs, questions, chat messages, outbox, telemetry, key-value",
    """
        CREATE TABLE cards (
            id INTEGER PRIMARY KEY,
            slug TEXT NOT NULL UNIQUE,
            kind TEXT NOT NULL CHECK (kind IN ('intent', 'research', 'draft')),
            title TEXT NOT NULL DEFAULT '',
            phase TEXT NOT NULL,
            resume_phase TEXT,
            version INTEGER NOT NULL DEFAULT 0,
            lane TEXT,
            runtime TEXT,
            model TEXT,
            reasoning_effort TEXT,
            iteration_limit INTEGER,
            parent_id INTEGER REFERENCES cards(id),
            wave INTEGER,
            write_scope TEXT NOT NULL DEFAULT '[]',
            acceptance_criteria TEXT NOT NULL DEFAULT '[]',
            escalation TEXT NOT NULL DEFAULT '[]',
            escalation_step INTEGER NOT NULL DEFAULT 0,
            attempts INTEGER NOT NULL DEFAULT 0,
            commit_hash TEXT,
            review_decision TEXT,
            review_report_path TEXT,
            deployment_status TEXT,
            failure_stage TEXT,
            failure_detail TEXT CHECK (failure_detail IS NULL OR length(failure_detail) <= 240),
            pipeline_run_id TEXT,
            source_path TEXT,
            data TEXT NOT NULL DEFAULT '{}',
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL
        );
        CREATE INDEX cards_phase ON cards(phase);
        CREATE INDEX cards_parent ON cards(parent_id);

        CREATE TABLE card_dependencies (
            card_id INTEGER NOT NULL REFERENCES cards(id) ON DELETE CASCADE,
            blocked_by_id INTEGER NOT NULL REFERENCES cards(id),
            PRIMARY KEY (card_id, blocked_by_id),
            CHECK (card_id <> blocked_by_id)
        ) WITHOUT ROWID;

        -- seq numbers a card's events 1, 2, 3, ...; UNIQUE makes a forked history
        -- (two writers both appending event n) impossible, not just unlikely.
        CREATE TABLE events (
            id INTEGER PRIMARY KEY,
            card_id INTEGER NOT NULL REFERENCES cards(id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            from_phase TEXT,
            to_phase TEXT NOT NULL,
            action TEXT NOT NULL,
            actor TEXT NOT NULL,
            reason TEXT NOT NULL DEFAULT '',
            at REAL NOT NULL,
            UNIQUE (card_id, seq)
        );

        CREATE TABLE jobs (
            id INTEGER PRIMARY KEY,
            card_id INTEGER REFERENCES cards(id) ON DELETE CASCADE,
            kind TEXT NOT NULL,
            lane TEXT NOT NULL,
            state TEXT NOT NULL DEFAULT 'queued'
                CHECK (state IN ('queued', 'running', 'done', 'failed', 'cancelled')),
            idempotency_key TEXT UNIQUE,
            payload TEXT NOT NULL DEFAULT '{}',
            attempts INTEGER NOT NULL DEFAULT 0,
            lease_owner TEXT,
            lease_expires_at REAL,
            heartbeat_at REAL,
            created_at REAL NOT NULL,
            started_at REAL,
            finished_at REAL,
            error TEXT,
            result TEXT
        );
        -- The one-active-job-per-card rule lives in the schema, so no code path can break it.
        CREATE UNIQUE INDEX jobs_one_active_per_card
            ON jobs(card_id) WHERE state IN ('queued', 'running');
        CREATE INDEX jobs_claim ON jobs(lane, state, id);

        CREATE TABLE questions (
            id INTEGER PRIMARY KEY,
            card_id INTEGER NOT NULL REFERENCES cards(id) ON DELETE CASCADE,
            kind TEXT NOT NULL,
            text TEXT NOT NULL,
            options TEXT NOT NULL DEFAULT '[]' CHECK (json_array_length(options) <= 4),
            state TEXT NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'answered', 'cancelled')),
            answer TEXT,
            answered_by TEXT,
            created_at REAL NOT NULL,
            answered_at REAL
        );
        CREATE UNIQUE INDEX questions_one_open_per_card ON questions(card_id) WHERE state = 'open';

        CREATE TABLE chat_messages (
            id INTEGER PRIMARY KEY,
            transport TEXT NOT NULL,
            room TEXT NOT NULL,
            message_id TEXT NOT NULL,
            card_id INTEGER REFERENCES cards(id) ON DELETE CASCADE,
            question_id INTEGER REFERENCES questions(id) ON DELETE CASCADE,
            purpose TEXT NOT NULL,
            created_at REAL NOT NULL,
            UNIQUE (transport, room, message_id)
        );
        CREATE INDEX chat_messages_by_id ON chat_messages(transport, message_id);

        CREATE TABLE outbox (
            id INTEGER PRIMARY KEY,
            transport TEXT NOT NULL,
            room TEXT NOT NULL,
            text TEXT NOT NULL,
            html TEXT,
            reply_to TEXT,
            card_id INTEGER REFERENCES cards(id) ON DELETE SET NULL,
            question_id INTEGER REFERENCES questions(id) ON DELETE SET NULL,
            purpose TEXT NOT NULL DEFAULT 'notice',
            state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'sent', 'failed')),
            attempts INTEGER NOT NULL DEFAULT 0,
            last_error TEXT,
            txn_id TEXT NOT NULL UNIQUE,
            message_id TEXT,
            created_at REAL NOT NULL,
            sent_at REAL
        );
        CREATE INDEX outbox_pending ON outbox(transport, state, id);

        CREATE TABLE telemetry (
            id INTEGER PRIMARY KEY,
            job_id INTEGER REFERENCES jobs(id) ON DELETE SET NULL,
            card_id INTEGER REFERENCES cards(id) ON DELETE SET NULL,
            role TEXT NOT NULL,
            runtime TEXT NOT NULL,
            configured_model TEXT,
            actual_model TEXT,
            reasoning_effort TEXT,
            input_tokens INTEGER,
            cached_tokens INTEGER,
            output_tokens INTEGER,
            cost_usd REAL,
            duration_s REAL,
            turns INTEGER,
            outcome TEXT NOT NULL,
            session_id TEXT,
            prompt TEXT,
            response TEXT,
            created_at REAL NOT NULL
        );
        CREATE INDEX telemetry_card ON telemetry(card_id, id);

        CREATE TABLE kv (
            key TEXT PRIMARY KEY,
            value TEXT NOT NULL,
            updated_at REAL NOT NULL
        ) WITHOUT ROWID;

        CREATE TABLE processed_events (
            transport TEXT NOT NULL,
            event_id TEXT NOT NULL,
            at REAL NOT NULL,
            PRIMARY KEY (transport, event_id)
        ) WITHOUT ROWID;
        """,
)

MIGRATIONS.register(
    2,
    "outbox targets people as well as rooms; requests from requesters",
    """
        -- A requester's /start, /draft or /research waits here for an owner's decision.
        -- (Created before the columns that refer to it: PostgreSQL checks references.)
        CREATE TABLE requests (
            id INTEGER PRIMARY KEY,
            requester TEXT NOT NULL,
            transport TEXT NOT NULL,
            command TEXT NOT NULL,
            argument TEXT NOT NULL DEFAULT '',
            state TEXT NOT NULL DEFAULT 'pending'
                CHECK (state IN ('pending', 'accepted', 'declined')),
            decided_by TEXT,
            created_at REAL NOT NULL,
            decided_at REAL
        );

        ALTER TABLE outbox ADD COLUMN target_kind TEXT NOT NULL DEFAULT 'room'
            CHECK (target_kind IN ('room', 'person'));
        ALTER TABLE outbox ADD COLUMN request_id INTEGER REFERENCES requests(id);
        ALTER TABLE chat_messages ADD COLUMN request_id INTEGER REFERENCES requests(id);
        """,
)

MIGRATIONS.register(
    3,
    "remember which process a running job started, to stop it after a crash",
    """
        ALTER TABLE jobs ADD COLUMN process TEXT;
        """,
)

MIGRATIONS.register(
    4,
    "when an outbox row's last send began, so a resend after a crash can check first",
    """
        ALTER TABLE outbox ADD COLUMN send_started_at REAL;
        """,
)

MIGRATIONS.register(
    5,
    "the failure to restore when an inspection or repair returns a card to where it was",
    """
        ALTER TABLE cards ADD COLUMN resume_failure_stage TEXT;
        ALTER TABLE cards ADD COLUMN resume_failure_detail TEXT;
        """,
)

MIGRATIONS.register(
    6,
    "cards lose the never-written attempts column",
    """
    ALTER TABLE cards DROP COLUMN attempts;
    """,
)

MIGRATIONS.register(
    7,
    "an outbox row may be a new text for an earlier one (a run's status message, edited)",
    """
    ALTER TABLE outbox ADD COLUMN replaces_id INTEGER REFERENCES outbox(id) ON DELETE CASCADE;
    CREATE INDEX outbox_replaces ON outbox(replaces_id) WHERE replaces_id IS NOT NULL;
    """,
)

MIGRATIONS.register(
    8,
    "an outbox row names who it mentions (a question rings the owners' phones)",
    """
    ALTER TABLE outbox ADD COLUMN mentions TEXT;
    """,
)

MIGRATIONS.register(
    9,
    "pipeline run ids, actual effort, review decision, acceptance and estimated cost per run; "
    "fixer attempts per card; queued fixer jobs move to their card's lane",
    """
    ALTER TABLE telemetry ADD COLUMN pipeline_run_id TEXT;
    ALTER TABLE telemetry ADD COLUMN actual_reasoning_effort TEXT;
    ALTER TABLE telemetry ADD COLUMN review_decision TEXT;
    -- NULL: not judged (a failed run, an unfinished builder turn); 1 applied; 0 refused.
    ALTER TABLE telemetry ADD COLUMN accepted INTEGER CHECK (accepted IN (0, 1));
    ALTER TABLE telemetry ADD COLUMN rejection TEXT;
    -- cost_usd is the runtime's own figure, or (1 here) tokens times a configured price.
    ALTER TABLE telemetry ADD COLUMN cost_estimated INTEGER NOT NULL DEFAULT 0;
    -- Earlier versions wrote a refused answer into the outcome.
    UPDATE telemetry SET accepted = 0, rejection = substr(outcome, 11), outcome = 'ok'
        WHERE outcome LIKE 'rejected: %';
    CREATE INDEX telemetry_pipeline ON telemetry(pipeline_run_id, id);
    CREATE INDEX telemetry_created ON telemetry(created_at);
    ALTER TABLE cards ADD COLUMN fixer_attempts INTEGER NOT NULL DEFAULT 0;
    -- The fixer now runs in its card's lane, no longer in a lane of its own.
    UPDATE jobs SET lane = (SELECT c.lane FROM cards c WHERE c.id = jobs.card_id)
        WHERE kind = 'fixer' AND state = 'queued'
        AND (SELECT c.lane FROM cards c WHERE c.id = jobs.card_id) IS NOT NULL;
    """,
)

MIGRATIONS.register(
    10,
    "workers on several hosts: who is alive, with which lanes; the host running each job",
    """
    CREATE TABLE workers (
        id TEXT PRIMARY KEY,
        host TEXT NOT NULL,
        process TEXT,
        lanes TEXT NOT NULL DEFAULT '[]',
        started_at REAL NOT NULL,
        heartbeat_at REAL NOT NULL,
        expires_at REAL NOT NULL
    );
    ALTER TABLE jobs ADD COLUMN host TEXT;
    CREATE INDEX jobs_running ON jobs(state, lane);
    """,
)

MIGRATIONS.register(
    11,
    "talking to a running agent: steers, interrupts and approval requests per job",
    """
    CREATE TABLE run_talk (
        id INTEGER PRIMARY KEY,
        job_id INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
        card_id INTEGER NOT NULL REFERENCES cards(id) ON DELETE CASCADE,
        kind TEXT NOT NULL CHECK (kind IN ('steer', 'interrupt', 'approval')),
        -- steer: the owner's words; approval: the command (or tool input) asked for
        text TEXT NOT NULL DEFAULT '',
        tool TEXT,
        cwd TEXT,
        -- steer/interrupt: who sent it; approval: who answered it
        actor TEXT,
        -- steer/interrupt: open, sent, taken, refused
        -- approval: open, allowed, denied, timed_out, closed
        state TEXT NOT NULL DEFAULT 'open',
        reason TEXT,
        created_at REAL NOT NULL,
        done_at REAL
    );
    CREATE INDEX run_talk_job ON run_talk(job_id, state);
    CREATE INDEX run_talk_card ON run_talk(card_id, kind, state);
    -- 1 while the job's runs go through an interactive protocol (they can be steered).
    ALTER TABLE jobs ADD COLUMN talks INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE outbox ADD COLUMN talk_id INTEGER REFERENCES run_talk(id) ON DELETE SET NULL;
    ALTER TABLE chat_messages ADD COLUMN talk_id INTEGER REFERENCES run_talk(id)
        ON DELETE SET NULL;
    ALTER TABLE telemetry ADD COLUMN steers INTEGER NOT NULL DEFAULT 0;
    """,
)

MIGRATIONS.register(
    12,
    "a job the provider's quota or rate limit stopped waits until not_before",
    """
    ALTER TABLE jobs ADD COLUMN not_before REAL;
    """,
)

MIGRATIONS.register(
    13,
    "reminders: when an unanswered question, request or approval was last reminded, "
    "and mentions held back by quiet hours",
    """
    CREATE TABLE reminders (
        -- 'question', 'request' or 'approval', and that row's id
        subject TEXT NOT NULL,
        subject_id INTEGER NOT NULL,
        -- the last reminder (or quiet hours' digest) that named it, and how many there were
        reminded_at REAL,
        reminders INTEGER NOT NULL DEFAULT 0,
        -- when quiet hours' digest rang the owners about it before any reminder did
        rung_at REAL,
        -- set while a mention of it waits for the end of quiet hours
        held_since REAL,
        PRIMARY KEY (subject, subject_id)
    );
    CREATE INDEX reminders_held ON reminders(held_since);
    """,
)

MIGRATIONS.register(
    14,
    "the daily digest: the day and moment it was last sent; events found by their time",
    """
    CREATE TABLE digests (
        -- one row per kind of digest ('daily')
        name TEXT PRIMARY KEY,
        -- the bot's local day it was last sent ('' before the first), and when
        last_day TEXT NOT NULL,
        last_at REAL,
        -- the moment of the one before: what the last digest covered started there
        previous_at REAL
    );
    INSERT INTO digests (name, last_day) VALUES ('daily', '');
    CREATE INDEX events_at ON events(at);
    """,
)

MIGRATIONS.register(
    15,
    "web sign-in: one-time links an owner asked for in a direct chat, and the sessions they became",
    """
    CREATE TABLE web_sessions (
        id INTEGER PRIMARY KEY,
        -- the owner it is bound to, as chat names people: 'xmpp:owner@example.org'
        identity TEXT NOT NULL,
        -- digests (sha256) of the link's token and of the session cookie, never the secrets
        link_hash TEXT NOT NULL UNIQUE,
        link_expires_at REAL NOT NULL,
        session_hash TEXT UNIQUE,
        -- what the session's forms carry; a form of another session carries another
        csrf TEXT NOT NULL,
        created_at REAL NOT NULL,
        -- set once, when the link is used: a second use finds it set
        signed_in_at REAL,
        expires_at REAL,
        last_used_at REAL,
        user_agent TEXT,
        revoked_at REAL
    );
    CREATE INDEX web_sessions_identity ON web_sessions(identity);
    """,
)

MIGRATIONS.register(
    16,
    "the web board at 100,000 cards: recent cards per phase, and what changed since a mark",
    """
    -- The board's columns and /cards walk a phase newest first and stop (LIMIT); a
    -- search by slug or title reads them here, not from the wide rows. (cards_phase
    -- stays: counting cards per phase walks that narrower one in half the time.)
    CREATE INDEX cards_phase_recent ON cards(phase, updated_at, id, slug, title);
    -- A live page's change mark takes the newest of each, and what changed since it
    -- walks from there: both without reading the whole table. /cards over every
    -- group walks this one, searching slug and title in it.
    CREATE INDEX cards_updated ON cards(updated_at, id, slug, title);
    CREATE INDEX questions_answered ON questions(answered_at);
    CREATE INDEX jobs_started ON jobs(started_at);
    CREATE INDEX jobs_finished ON jobs(finished_at);
    """,
)

MIGRATIONS.register(
    17,
    "line comments on a card's change, and which file of it a chat post showed",
    """
    CREATE TABLE line_comments (
        id INTEGER PRIMARY KEY,
        card_id INTEGER NOT NULL REFERENCES cards(id) ON DELETE CASCADE,
        -- the commit the comment was written on, and where in it (new-file lines;
        -- no lines: the whole file)
        commit_hash TEXT NOT NULL,
        path TEXT NOT NULL,
        line_start INTEGER,
        line_end INTEGER,
        -- the code it is about, taken by the bot from the diff (never from the sender)
        quote TEXT NOT NULL DEFAULT '',
        body TEXT NOT NULL,
        author TEXT NOT NULL,
        -- open: written; sent: given to a run (the fixer's prompt, a steer);
        -- answered: a commit of that run followed
        state TEXT NOT NULL DEFAULT 'open',
        job_id INTEGER REFERENCES jobs(id) ON DELETE SET NULL,
        answered_commit TEXT,
        created_at REAL NOT NULL,
        answered_at REAL
    );
    CREATE INDEX line_comments_card ON line_comments(card_id, state);
    CREATE INDEX line_comments_state ON line_comments(state);
    CREATE TABLE diff_views (
        id INTEGER PRIMARY KEY,
        card_id INTEGER NOT NULL REFERENCES cards(id) ON DELETE CASCADE,
        commit_hash TEXT NOT NULL,
        path TEXT NOT NULL,
        created_at REAL NOT NULL
    );
    ALTER TABLE outbox ADD COLUMN diff_view_id INTEGER REFERENCES diff_views(id)
        ON DELETE SET NULL;
    ALTER TABLE chat_messages ADD COLUMN diff_view_id INTEGER REFERENCES diff_views(id)
        ON DELETE SET NULL;
    """,
)

MIGRATIONS.register(
    18,
    "files people send and the bot sends: kept by their hash, tied to cards; "
    "outbox rows and chat messages may carry one",
    """
    CREATE TABLE attachments (
        id INTEGER PRIMARY KEY,
        -- the bytes, kept once under their hash in the files folder (store/blobs.py)
        sha256 TEXT NOT NULL,
        size INTEGER NOT NULL,
        -- sniffed from the bytes (board/file_kinds.py), never the sender's claim
        content_type TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('image', 'text', 'pdf', 'audio')),
        -- for display only: no path separators or control characters, bounded
        name TEXT NOT NULL,
        -- NULL while loose (sent without naming its card), then what it went with
        card_id INTEGER REFERENCES cards(id) ON DELETE SET NULL,
        purpose TEXT NOT NULL DEFAULT ''
            CHECK (purpose IN ('', 'card', 'steer', 'answer', 'draft', 'outgoing')),
        question_id INTEGER REFERENCES questions(id) ON DELETE SET NULL,
        -- the steer it came with (the worker hands it to the running agent with it)
        talk_id INTEGER REFERENCES run_talk(id) ON DELETE SET NULL,
        -- a requester's request it waits with, until an owner accepts it
        request_id INTEGER REFERENCES requests(id) ON DELETE SET NULL,
        -- who sent it, from where ('' for the bot's own)
        actor TEXT NOT NULL DEFAULT '',
        transport TEXT NOT NULL DEFAULT '',
        chat TEXT NOT NULL DEFAULT '',
        message_id TEXT NOT NULL DEFAULT '',
        -- 1: it came from an end-to-end encrypted room
        encrypted INTEGER NOT NULL DEFAULT 0 CHECK (encrypted IN (0, 1)),
        created_at REAL NOT NULL,
        -- set when the quota dropped its bytes (the row stays: the card's list says so)
        gone_at REAL
    );
    CREATE INDEX attachments_card ON attachments(card_id, id);
    CREATE INDEX attachments_sha ON attachments(sha256);
    CREATE INDEX attachments_kept ON attachments(gone_at, created_at);
    ALTER TABLE outbox ADD COLUMN attachment_id INTEGER REFERENCES attachments(id)
        ON DELETE SET NULL;
    ALTER TABLE chat_messages ADD COLUMN attachment_id INTEGER REFERENCES attachments(id)
        ON DELETE SET NULL;
    """,
)

MIGRATIONS.register(
    19,
    "routines: commands on a schedule, and one row per occurrence that decides who fires it",
    ROUTINES_SCHEMA,
)

MIGRATIONS.register(
    20,
    "the cards that wait for an owner by themselves, found along one index",
    """
    -- A card waits for an owner by itself (a failure's ways, an approved card with its
    -- deployment pending: board/waiting.py) by its phase, deployment status and failure
    -- stage. The board page's waiting cards, the inbox's card items and their count
    -- read these from the index alone, newest or oldest by updated_at, and seek the
    -- pending approvals instead of reading every approved card's row where they pile up.
    CREATE INDEX cards_waits_itself
        ON cards(phase, deployment_status, failure_stage, updated_at, id);
    """,
)

MIGRATIONS.register(
    21,
    "a working agent's questions (tied to the job that asked) beside the card's one "
    "question, and the follow-up cards it proposes until an owner confirms one",
    """
    -- An agent's question belongs to the run that asked it, and a run may have a few
    -- open at once: the card's one-open-question rule holds for every other kind.
    ALTER TABLE questions ADD COLUMN job_id INTEGER REFERENCES jobs(id) ON DELETE SET NULL;
    -- How it was answered (reply, option, web, command) or why it closed unanswered.
    ALTER TABLE questions ADD COLUMN answered_via TEXT;
    ALTER TABLE questions ADD COLUMN closed_reason TEXT;
    DROP INDEX questions_one_open_per_card;
    CREATE UNIQUE INDEX questions_one_open_per_card
        ON questions(card_id) WHERE state = 'open' AND kind <> 'agent';
    CREATE INDEX questions_open_card ON questions(card_id, id) WHERE state = 'open';
    CREATE INDEX questions_job ON questions(job_id, state);
    CREATE TABLE proposals (
        id INTEGER PRIMARY KEY,
        -- the card whose run proposed it, and that run
        card_id INTEGER NOT NULL REFERENCES cards(id) ON DELETE CASCADE,
        job_id INTEGER REFERENCES jobs(id) ON DELETE SET NULL,
        title TEXT NOT NULL,
        goal TEXT NOT NULL,
        scope TEXT NOT NULL DEFAULT '',
        -- the slug it would get (checked again when it is confirmed)
        slug TEXT NOT NULL,
        state TEXT NOT NULL DEFAULT 'pending'
            CHECK (state IN ('pending', 'confirmed', 'refused')),
        decided_by TEXT,
        -- the card it became
        created_card_id INTEGER REFERENCES cards(id) ON DELETE SET NULL,
        created_at REAL NOT NULL,
        decided_at REAL
    );
    CREATE INDEX proposals_pending ON proposals(state, card_id);
    CREATE INDEX proposals_job ON proposals(job_id, state);
    ALTER TABLE outbox ADD COLUMN proposal_id INTEGER REFERENCES proposals(id)
        ON DELETE SET NULL;
    ALTER TABLE chat_messages ADD COLUMN proposal_id INTEGER REFERENCES proposals(id)
        ON DELETE SET NULL;
    """,
)

MIGRATIONS.register(
    22,
    "why a routine is paused (by an owner, its failures, its budget) or stopped, as a value",
    PAUSE_CAUSE_STEP,
)

MIGRATIONS.register(
    23,
    "each owner's own settings: the time zone their routines' times are read in",
    OWNER_SETTINGS_STEP,
)

LATEST = MIGRATIONS.latest
