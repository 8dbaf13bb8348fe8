"""Follow-up cards a working agent proposes, kept until an owner's word.

Nothing is created by the agent: its proposal waits as a row. An owner's 👍 or
`/confirm proposal-<id>` makes a planned card of it (its intent file written as a
/draft's is, its slug checked again, since a card or file of that name may have come
meanwhile); 👎 or `/cancel proposal-<id>` drops it and leaves no card.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from pathlib import Path

from chatbot.board.agent_input import slug_stem
from chatbot.board.errors import BoardError
from chatbot.board.files import FileExistsRefusal, StagedFiles
from chatbot.board.tx import BoardTx, PageEcho
from chatbot.domain.phases import Kind, Phase
from chatbot.store import Db, Store
from chatbot.store import cards as card_store
from chatbot.store import proposals as proposal_store
from chatbot.store.cards import Card
from chatbot.store.jobs import Job
from chatbot.store.proposals import Proposal

#: At most this many of one run's proposals wait at once.
MAX_PENDING = 3
#: How a proposal is named in chat: `/confirm proposal-3`.
TARGET = re.compile(r"proposal-(\d{1,9})")
Along = Callable[[BoardTx], Awaitable[None]]


class TooManyProposals(BoardError):
    """The run has as many proposals waiting as it may."""


class ProposalDecided(BoardError):
    """Someone confirmed or refused it first; the first word stands."""

    def __init__(self, proposal: Proposal):
        super().__init__(f"proposal-{proposal.id} was {proposal.state} already")
        self.proposal = proposal


class ProposalSlugTaken(BoardError):
    """Its card's name (or intent file) was taken meanwhile; nothing was created."""


class UnknownProposal(BoardError):
    pass


def target_id(word: str) -> int | None:
    """The proposal a chat target names ("proposal-3"), or None."""
    match = TARGET.fullmatch(word.strip().lower())
    return int(match.group(1)) if match else None


def intent_path(slug: str) -> str:
    return f"docs/intent/{slug}.md"


def intent_markdown(proposal: Proposal, source_slug: str) -> str:
    scope = f"\n## Scope\n\n{proposal.scope}\n" if proposal.scope else ""
    return (
        f"# {proposal.title}\n\n{proposal.goal}\n{scope}\n"
        f"Proposed by the run of card `{source_slug}` (proposal-{proposal.id}).\n"
    )


async def _free(db: Db, repo: Path, slug: str, also_taken: set[str]) -> bool:
    if slug in also_taken or await card_store.get(db, slug) is not None:
        return False
    return not (repo / intent_path(slug)).exists()


async def add(
    db: Db,
    repo: Path,
    job: Job,
    card: Card,
    role: str,
    fields: tuple[str, str, str],
    most: int,
) -> Proposal:
    title, goal, scope = fields
    if await proposal_store.pending_of_job(db, job.id) >= most:
        raise TooManyProposals(
            f"{most} of your proposals wait for the owner already; mention further "
            "follow-ups in your report"
        )
    taken = await proposal_store.pending_slugs(db)
    stem = slug_stem(title)
    slug, number = stem, 1
    while not await _free(db, repo, slug, taken):
        number += 1
        slug = f"{stem}-{number}"
    made = await proposal_store.add(db, card.id, job.id, title, goal, scope, slug)
    line = f"the {role} proposes a follow-up card: {title} (proposal-{made.id})"
    await card_store.note(db, card.id, "agent_proposed", role, line)
    return made


async def get(db: Db, proposal_id: int) -> Proposal | None:
    return await proposal_store.get(db, proposal_id)


async def _pending(db: Db, proposal_id: int) -> Proposal:
    found = await proposal_store.get(db, proposal_id)
    if found is None:
        raise UnknownProposal(f"there is no proposal-{proposal_id}")
    if not found.is_pending:
        raise ProposalDecided(found)
    return found


async def confirm(
    store: Store,
    repo: Path,
    proposal_id: int,
    actor: str,
    along: Along | None,
    echo: PageEcho | None,
) -> tuple[Proposal, Card]:
    files = StagedFiles(repo)
    try:
        async with store.transaction() as db:
            found = await _pending(db, proposal_id)
            source = await card_store.get_by_id(db, found.card_id)
            source_slug = source.slug if source is not None else "?"
            if not await _free(db, repo, found.slug, set()):
                raise ProposalSlugTaken(
                    f"a card or intent file '{found.slug}' exists already; nothing was "
                    f"created. /cancel proposal-{found.id}, or write the card yourself"
                )
            path = intent_path(found.slug)
            try:
                files.add(path, intent_markdown(found, source_slug), must_be_new=True)
            except FileExistsRefusal as refusal:
                raise ProposalSlugTaken(f"{refusal}; nothing was created") from None
            made = await card_store.create(
                db,
                found.slug,
                Kind.INTENT,
                Phase.PLANNED,
                actor=actor,
                action="proposal_confirmed",
                reason=f"proposed by the run of card {source_slug}, confirmed by {actor}",
                title=found.title,
                source_path=path,
            )
            decided = await proposal_store.decide(
                db, found.id, proposal_store.CONFIRMED, actor, made.id
            )
            if decided is None:  # decided meanwhile: the transaction is undone
                raise ProposalDecided(found)
            line = f"proposal-{found.id} confirmed: card {made.slug}"
            await card_store.note(db, found.card_id, "proposal_confirmed", actor, line)
            if along is not None:
                await along(BoardTx(db, echo))
            files.commit()  # the last step before COMMIT, as a split plan's files
            return decided, made
    except BaseException:
        files.discard()
        raise


async def refuse(
    store: Store, proposal_id: int, actor: str, along: Along | None, echo: PageEcho | None
) -> Proposal:
    async with store.transaction() as db:
        found = await _pending(db, proposal_id)
        decided = await proposal_store.decide(db, found.id, proposal_store.REFUSED, actor)
        if decided is None:
            raise ProposalDecided(found)
        line = f"proposal-{found.id} refused: {found.title}"
        await card_store.note(db, found.card_id, "proposal_refused", actor, line)
        if along is not None:
            await along(BoardTx(db, echo))
        return decided
