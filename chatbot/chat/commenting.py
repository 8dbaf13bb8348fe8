"""/diff a file at a time, and line comments: `/comment`, or a reply quoting a diff's lines.

A comment goes to the board (board/comments.py), which decides by the card's phase
whether it starts the fixer, steers the running agent or is refused. A requester's
comment is a request an owner accepts, like their other commands. A reply finds the
file and commit of the message it answers (or, for a quote without a reply, of the
latest diff message in that chat whose lines it quotes); the line numbers come from
the quoted lines, and the board checks them against the change itself.
"""

from __future__ import annotations

import re

from chatbot.board import Card, Posted, UnknownCard
from chatbot.board.comments import Commented, CommentRefused, NewComment
from chatbot.chat import render_diff
from chatbot.chat.authority import Standing
from chatbot.chat.commands import BY_NAME, CommandCall
from chatbot.chat.host import Facet
from chatbot.chat.replies import Origin
from chatbot.domain.transitions import Action, allowed_actions
from chatbot.transports.networks import sends_files
from runners.commit_view import CommitViewError

_WHERE = re.compile(r"^(?P<path>[^\s:]+(?::[^\s:]+)*?)(?::(?P<start>\d+)(?:-(?P<end>\d+))?)?$")
_WENT = {"fixer": "comment_to_fixer", "steer": "comment_to_steer", "resumed": "comment_to_resumed"}


def parse_where(where: str) -> tuple[str, tuple[int, int] | None] | None:
    """`file`, `file:12` or `file:12-15` as (path, lines); None when it is neither."""
    found = _WHERE.match(where.strip())
    if found is None:
        return None
    start = found.group("start")
    if start is None:
        return found.group("path"), None
    end = found.group("end") or start
    return found.group("path"), (int(start), int(end))


class CommentHandlers(Facet):
    # --- /diff ---------------------------------------------------------------------------

    async def diff(self, origin: Origin, invocation: CommandCall) -> None:
        event, slug = origin.event, invocation.text("slug")
        try:
            card = await self.board.reads.card(slug)
        except UnknownCard:
            await self.replies.unknown_card(event, slug)
            return
        if not card.commit_hash:
            phase = card.phase.label(self.locale)
            await self.replies.say(event, "diff_none", slug=card.slug, phase=phase)
            return
        try:
            change = await self.board.reads.change(card)
        except CommitViewError as error:
            await self.replies.say(
                event,
                "diff_failed",
                slug=card.slug,
                commit=card.commit_hash[:12],
                detail=str(error),
                purpose="refusal",
            )
            return
        assert change is not None
        page = invocation.number("page") if invocation.text("page") else 1
        total = render_diff.pages(change)
        if page > total:
            await self.replies.say(event, "diff_no_page", slug=card.slug, page=page, pages=total)
            return
        head = render_diff.summary(card.slug, change, page, self.locale)
        if page < total:
            head += "\n" + self.replies.text("diff_next", slug=card.slug, page=page + 1)
        if change.files and Action.COMMENT in allowed_actions(
            card.phase, card.kind, card.failure_stage
        ):
            # Said only where the table takes a comment, so what it suggests works.
            head += "\n" + self.replies.text("diff_how_to_comment", slug=card.slug)
        await self.replies.send(event, head, card_id=card.id)
        if page == 1 and render_diff.is_long(change) and sends_files(event.envelope.transport):
            await self._patch_file(origin, card)
        first = (page - 1) * render_diff.FILES_PER_PAGE
        for index in range(first, min(first + render_diff.FILES_PER_PAGE, len(change.files))):
            post = render_diff.file_post(card.slug, change, index, self.locale)
            view = await self.board.comments.add_diff_view(card, change.commit, post.path)
            await self.replies.send(
                event,
                post.text,
                card_id=card.id,
                purpose="diff",
                diff_view_id=view.id,
                html=post.html,
            )

    async def _patch_file(self, origin: Origin, card: Card) -> None:
        """A long change also as one .patch file: a phone's client opens it whole."""
        try:
            found = await self.board.reads.patch(card)
        except CommitViewError:
            return  # the pages above said what could be read
        if found is None:
            return
        text, cut = found
        name = f"{card.slug}-{(card.commit_hash or '')[:12]}.patch"
        kept = await self.board.files.keep_outgoing(
            text.encode(), name=name, content_type="text/x-diff; charset=utf-8"
        )
        key = "diff_patch_cut" if cut else "diff_patch"
        caption = self.replies.text(key, slug=card.slug, lines=text.count("\n"))
        await self.replies.send(origin.event, caption, card_id=card.id, attachment_id=kept.id)

    # --- /comment and replies --------------------------------------------------------------

    async def comment(self, origin: Origin, invocation: CommandCall) -> None:
        slug, where = invocation.text("slug"), invocation.text("file:line")
        place = parse_where(where)
        if place is None:
            await self.replies.say(
                origin.event, "comment_bad_where", where=where, slug=slug, purpose="refusal"
            )
            return
        path, lines = place
        await self.comment_at(origin, slug, NewComment(path, lines, invocation.text("text")))

    async def comment_on_post(self, origin: Origin, posted: Posted, text: str, quote: str) -> None:
        """A reply to one of /diff's file messages (or a quote of one): a line comment."""
        view = await self.board.comments.diff_view(posted.diff_view_id or 0)
        card = await self.board.reads.card_by_id(posted.card_id) if posted.card_id else None
        if view is None or card is None:
            slug = card.slug if card is not None else "<slug>"
            await self.replies.say(origin.event, "comment_unknown_post", slug=slug)
            return
        quoted, words = render_diff.split_quote(text)
        lines = render_diff.quoted_lines(quoted) or render_diff.quoted_lines(quote)
        if not words:
            await self.replies.say(origin.event, "comment_no_words", purpose="refusal")
            return
        new = NewComment(view.path, lines, words, commit=view.commit_hash)
        await self.comment_at(origin, card.slug, new)

    async def comment_at(self, origin: Origin, slug: str, new: NewComment) -> None:
        event = origin.event
        if origin.role is not Standing.OWNER:
            await self._comment_request(origin, slug, new)
            return

        try:
            done: Commented = await self.board.comments.add(slug, new, actor=origin.actor)
        except UnknownCard:
            await self.replies.unknown_card(event, slug)
            return
        except CommentRefused as refused:
            await self.replies.say(
                event, "comment_refused", detail=str(refused), slug=slug, purpose="refusal"
            )
            return
        except CommitViewError as error:
            commit = new.commit or "-"
            await self.replies.say(
                event,
                "diff_failed",
                slug=slug,
                commit=commit[:12],
                detail=str(error),
                purpose="refusal",
            )
            return
        made = done.comment
        await self.replies.say(
            event, _WENT[done.went], slug=slug, id=made.id, where=made.where, card_id=done.card.id
        )

    async def _comment_request(self, origin: Origin, slug: str, new: NewComment) -> None:
        """A requester's comment waits for an owner, like their /start: as the command."""
        where = new.path
        if new.lines is not None:
            start, end = new.lines
            where += f":{start}" if start == end else f":{start}-{end}"
        args: dict[str, str | int | None] = {"slug": slug, "file:line": where, "text": new.body}
        await self.host.request(origin, CommandCall(BY_NAME["comment"], args))
