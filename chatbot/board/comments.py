"""An owner's comment on lines of a card's change becomes the agent's next task.

Where it lands depends on the card (the transition table decides, not this module):
a card in review, ready, failed or sent back starts the fixer with every comment not
yet answered (`Action.COMMENT`); a running builder or fixer is steered with it; an
interrupted one goes on in its session with it. Elsewhere it is refused, naming the
phase. The file, the lines and the quoted code are checked against the change itself
(the quote is taken from the diff, never from the sender), and the comment, the move
and the room's notice are one transaction.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from chatbot.board.talk import first_line
from chatbot.board.tx import BoardError, BoardTx, PageEcho
from chatbot.domain.phases import Phase
from chatbot.domain.shown import visible
from chatbot.domain.transitions import Action, By, allowed_actions
from chatbot.store import cards as card_store
from chatbot.store import comments as comment_store
from chatbot.store import jobs as job_store
from chatbot.store import talk as talk_store
from chatbot.store.cards import Card
from chatbot.store.comments import DiffView, LineComment
from chatbot.store.db import Db, Store
from chatbot.store.jobs import JobState
from runners.diff_files import CommitDiff, FileChange

# What one comment may carry: a phone's paragraph, a few lines of code.
MAX_BODY_CHARS = 2_000
MAX_QUOTE_LINES = 20
MAX_QUOTE_CHARS = 2_000
# A running agent is steered with these; an interrupted one goes on with them.
STEERED = (Phase.BUILDING, Phase.FIXER_RUNNING)
# Jobs a comment may stop: a review of the commit it finds wanting, a deploy not begun.
_STOPPABLE = ("reviewer", "deploy")

CommentAlong = Callable[[BoardTx, LineComment], Awaitable[None]]


@dataclass(frozen=True)
class NewComment:
    path: str
    #: First and last line in the new file; None: the file as a whole.
    lines: tuple[int, int] | None
    body: str
    #: The commit the commenter was shown (a page, a diff post); None: the card's.
    commit: str | None = None


class CommentRefused(BoardError):
    """A comment the board cannot take; the message says why and what to do."""

    def __init__(self, message: str, card: Card | None = None):
        super().__init__(message)
        self.card = card


@dataclass(frozen=True)
class Commented:
    comment: LineComment
    card: Card
    #: "fixer" (it starts with the comment), "steer" (the running agent has it) or
    #: "resumed" (the interrupted session goes on with it).
    went: str


def comment_text(comment: LineComment) -> str:
    """The comment as an agent reads it in a steer: where, the code, the words."""
    quote = "\n".join(f"> {line}" for line in comment.quote.splitlines())
    return f"Owner's comment on {comment.where}:\n{quote}\n\n{comment.body}".strip()


def agent_view(comments: Sequence[LineComment]) -> list[dict[str, Any]]:
    """The comments as data for a prompt (fenced there: they are untrusted text)."""
    return [
        {
            "comment": c.id,
            "file": c.path,
            "lines": None if c.line_start is None else [c.line_start, c.line_end],
            "code": c.quote,
            "text": c.body,
            "by": c.author,
        }
        for c in comments
    ]


def find_file(change: CommitDiff, path: str) -> FileChange | None:
    return next((f for f in change.files if f.path == path), None)


def quote_of(found: FileChange, lines: tuple[int, int] | None) -> str:
    """The new file's lines `lines` as the change shows them; CommentRefused when the
    change does not show them (a line outside its hunks, a deleted file)."""
    if lines is None:
        return ""
    start, end = lines
    if start < 1 or end < start:
        raise CommentRefused(f"{start}-{end} is not a range of lines")
    if end - start + 1 > MAX_QUOTE_LINES:
        raise CommentRefused(f"a comment covers at most {MAX_QUOTE_LINES} lines")
    shown = {line.number: line.text for line in found.lines if line.number is not None}
    missing = [n for n in range(start, end + 1) if n not in shown]
    if missing:
        ranges = _ranges(sorted(shown))
        where = ", ".join(ranges[:6]) + (" …" if len(ranges) > 6 else "") or "none"
        raise CommentRefused(
            f"line {missing[0]} of {visible(found.path)} is not in the change "
            f"(its lines there: {where})"
        )
    quote = "\n".join(visible(shown[n]) for n in range(start, end + 1))
    return quote[:MAX_QUOTE_CHARS]


def _ranges(numbers: list[int]) -> list[str]:
    found: list[str] = []
    for number in numbers:
        if found and found[-1].split("-")[-1] == str(number - 1):
            found[-1] = f"{found[-1].split('-')[0]}-{number}"
        else:
            found.append(str(number))
    return found


#: BoardService's own steps a comment's move takes (moves.py): queue the next run, tell
#: the listeners, read the card's change.
QueueRun = Callable[[Db, Card, dict[str, Any] | None], Awaitable[Any]]
Announce = Callable[..., Awaitable[Any]]
ChangeOf = Callable[[Card], Awaitable[CommitDiff | None]]


class BoardComments:
    """Owners' comments on lines of a card's change (`board.comments`)."""

    def __init__(
        self,
        store: Store,
        *,
        queue_run: QueueRun,
        announce: Announce,
        change: ChangeOf,
        page_echo: Callable[[], PageEcho | None],
    ):
        self.store = store
        self._queue_run = queue_run
        self.announce = announce
        self.change = change
        self._page_echo = page_echo

    # --- reading -------------------------------------------------------------------------

    async def of_card(self, card: Card) -> list[LineComment]:
        return await comment_store.of_card(self.store.reader, card.id)

    async def unanswered(self, card: Card) -> list[LineComment]:
        return await comment_store.unanswered(self.store.reader, card.id)

    async def answered_by(self, card: Card, commit: str) -> list[LineComment]:
        return await comment_store.answered_by(self.store.reader, card.id, commit)

    async def diff_view(self, view_id: int) -> DiffView | None:
        return await comment_store.view(self.store.reader, view_id)

    # --- writing -------------------------------------------------------------------------

    async def add(
        self,
        slug: str,
        new: NewComment,
        *,
        actor: str,
        along: CommentAlong | None = None,
    ) -> Commented:
        card = await card_store.require(self.store.reader, slug)
        if not card.commit_hash:
            raise CommentRefused(f"{slug} has no commit to comment on yet", card)
        if new.commit and not card.commit_hash.startswith(new.commit):
            raise CommentRefused(
                f"{slug} has a newer commit ({card.commit_hash[:12]}) than the one commented "
                f"on ({new.commit[:12]}): read its change again and comment there",
                card,
            )
        body = visible(new.body.strip())
        if not body:
            raise CommentRefused("the comment has no words", card)
        if len(body) > MAX_BODY_CHARS:
            raise CommentRefused(f"a comment has at most {MAX_BODY_CHARS:,} characters", card)
        change = await self.change(card)
        found = find_file(change, new.path) if change is not None else None
        if found is None:
            raise CommentRefused(f"{visible(new.path)} is not in the change of {slug}", card)
        quote = quote_of(found, new.lines)
        async with self.store.transaction() as db:
            card = await card_store.require(db, slug)
            if card.commit_hash is None or not card.commit_hash.startswith(new.commit or ""):
                raise CommentRefused(f"{slug} moved on to another commit meanwhile", card)
            made = await comment_store.add(
                db,
                card.id,
                commit_hash=card.commit_hash,
                path=found.path,
                lines=new.lines,
                quote=quote,
                body=body,
                author=actor,
            )
            went = await self._deliver(db, card, made, actor)
            made = await comment_store.get(db, made.id) or made
            if along is not None:
                await along(BoardTx(db, self._page_echo()), made)
            card = await card_store.require(db, slug)
        return Commented(made, card, went)

    async def _deliver(self, db: Db, card: Card, made: LineComment, actor: str) -> str:
        details: dict[str, Any] = {"comment": _said(made)}
        reason = f"comment on {made.where}: {first_line(made.body, 120)}"
        allowed = allowed_actions(card.phase, card.kind, card.failure_stage, By.OWNER)
        if Action.COMMENT in allowed:
            active = await job_store.active_for_card(db, card.id)
            if active is not None:
                if active.kind not in _STOPPABLE or (
                    active.kind == "deploy" and active.state is JobState.RUNNING
                ):
                    raise CommentRefused(
                        f"{card.slug} has a {active.kind} run under way: comment when it ends",
                        card,
                    )
                await job_store.cancel(db, active.id, f"a comment by {actor} replaces it")
            after = await card_store.transition(
                db,
                card.slug,
                Action.COMMENT,
                actor=actor,
                by=By.OWNER,
                reason=reason,
                fixer_attempts=card.fixer_attempts + 1,
            )
            if card.phase is Phase.REVIEWING:
                # Cancelling the fixer then leaves the card sent back, not in a review
                # that no longer runs.
                await card_store.set_resume_phase(db, after.id, Phase.PLANNING_WITH_FEEDBACK)
            await self._queue_run(db, after, None)
            await self.announce(db, card, after, Action.COMMENT, actor, reason, None, details)
            return "fixer"
        if card.phase is Phase.INTERRUPTED:
            session = card.data.interrupted["session"] if card.data.interrupted else None
            after = await card_store.transition(
                db, card.slug, Action.STEER, actor=actor, by=By.OWNER, reason=reason
            )
            await self._queue_run(
                db, after, {"steer": comment_text(made), "session": session or ""}
            )
            job = await job_store.active_for_card(db, after.id)
            await comment_store.mark_sent(db, [made.id], job.id if job else None)
            details["went"] = "resumed"
            await self.announce(db, card, after, Action.COMMENT, actor, reason, None, details)
            return "resumed"
        if card.phase in STEERED:
            job = await job_store.active_for_card(db, card.id)
            if job is None or job.state is not JobState.RUNNING or not job.talks:
                raise CommentRefused(
                    f"{card.slug}'s {card.phase.label('en')} run cannot be steered now: "
                    "comment again when it has committed",
                    card,
                )
            await talk_store.add(db, job.id, card.id, "steer", comment_text(made), actor=actor)
            await comment_store.mark_sent(db, [made.id], job.id)
            await card_store.note(db, card.id, "comment", actor, reason)
            details["went"] = "steer"
            await self.announce(db, card, card, Action.COMMENT, actor, reason, None, details)
            return "steer"
        raise CommentRefused(
            f"{card.slug} is {card.phase.label('en')}: a comment goes to its agent in review, "
            "ready for deployment, failed or sent back, or while its builder or fixer runs",
            card,
        )

    async def mark_sent(self, comments: Sequence[LineComment], job_id: int | None) -> None:
        """The fixer's prompt holds them: its next commit answers them."""
        if comments:
            async with self.store.transaction(exclusive=False) as db:
                await comment_store.mark_sent(db, [c.id for c in comments], job_id)

    async def add_diff_view(self, card: Card, commit: str, path: str) -> DiffView:
        async with self.store.transaction(exclusive=False) as db:
            return await comment_store.add_view(db, card.id, commit, path)


def _said(comment: LineComment) -> dict[str, Any]:
    return {
        "id": comment.id,
        "where": comment.where,
        "quote": comment.quote,
        "body": comment.body,
        "by": comment.author,
    }


__all__ = [
    "CommentRefused",
    "Commented",
    "NewComment",
    "agent_view",
    "comment_text",
]
