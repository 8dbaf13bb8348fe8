"""The commands that only look: /help, /status, /log (/runs is in spending.py, /diff in
commenting.py).

Nothing here changes the board; each answer is one post that reports no change.
"""

from __future__ import annotations

from chatbot.board import CardView, UnknownCard
from chatbot.board import inbox as board_inbox
from chatbot.board.hand_over import hand_over
from chatbot.chat import render, render_help, render_inbox, render_log
from chatbot.chat.authority import Standing
from chatbot.chat.commands import CommandCall
from chatbot.chat.host import Facet
from chatbot.chat.replies import Origin
from chatbot.domain.counted import counted
from chatbot.transports.networks import NETWORKS, sends_files

# How many runs /status <slug> shows.
RUNS_SHOWN = 5


class Lookups(Facet):
    async def help(self, origin: Origin, invocation: CommandCall) -> None:
        name = invocation.text("command") or None
        # The asker's network may have a syntax of its own to point at messages (the
        # console's ">N", "+N"): its record says it; chat knows no network by name.
        network = NETWORKS.get(origin.event.envelope.transport)
        extra = network.syntax_help(self.locale) if network is not None else ""
        role, who = origin.role, origin.identity.id
        text = render_help.help_text(self.locale, name, role, who, network_lines=extra)
        for part in render_help.in_messages(text, self.replies.max_chars):
            await self.replies.send(origin.event, part)

    async def status(self, origin: Origin, invocation: CommandCall) -> None:
        slug = invocation.text("slug")
        if slug:
            await self._card_status(origin, slug)
            return
        summary = await self.board.reads.summary(with_slugs=True)
        questions = []
        for question in await self.board.reads.open_questions():
            card = await self.board.reads.card_by_id(question.card_id)
            questions.append((card.slug if card else "-", question))
        requests = await self.board.reads.pending_requests()
        text = render.board(
            summary, questions, requests, await self.board.reads.job_slugs(), self.locale
        )
        await self.replies.send(origin.event, text)

    async def _card_status(self, origin: Origin, slug: str) -> None:
        if view := await self._view(origin, slug):
            runs = await self.board.reads.runs_of(view.card.id, RUNS_SHOWN)
            text = render.card(view, runs, self.locale)
            given = None
            if self.config is not None:
                bot, runtimes = self.config.bot, self.config.runtimes
                given = hand_over(view.card, runs, bot.workspaces, runtimes)
            if given is not None:
                text += "\n" + render.hand_over(given, self.locale)
            await self.replies.send(origin.event, text, card_id=view.card.id)

    async def inbox(self, origin: Origin, invocation: CommandCall) -> None:
        # A requester sees their own requests only: the rest is for owners to resolve.
        own = origin.role is not Standing.OWNER
        items = await board_inbox.inbox(self.board, origin.actor if own else None)
        await self.replies.send(
            origin.event,
            render_inbox.inbox(items, self.locale, own=own, shown=render_inbox.SHOWN_IN_CHAT),
        )

    async def why(self, origin: Origin, invocation: CommandCall) -> None:
        slug = invocation.text("slug")
        try:
            found = await board_inbox.why(self.board, slug)
        except UnknownCard:
            await self.replies.unknown_card(origin.event, slug)
            return
        text = render_inbox.why(found, self.locale)
        await self.replies.send(origin.event, text)

    async def log(self, origin: Origin, invocation: CommandCall) -> None:
        view = await self._view(origin, invocation.text("slug"))
        if view is None:
            return
        if invocation.text("as") != "--file":
            text = render.history(view, self.locale)
            await self.replies.send(origin.event, text, card_id=view.card.id)
            return
        event, slug = origin.event, view.card.slug
        if not sends_files(event.envelope.transport):
            await self.replies.say(event, "file_cannot_send", command=f"/log {slug}")
            return
        runs = await self.board.reads.runs_of(view.card.id, limit=200)
        data = render_log.log_file(view, runs, self.locale).encode()
        kept = await self.board.files.keep_outgoing(
            data, name=f"{slug}-log.txt", content_type="text/plain; charset=utf-8"
        )
        caption = self.replies.text(
            "log_file",
            slug=slug,
            events=counted(len(view.events), "event", self.locale),
            runs=counted(len(runs), "run", self.locale),
        )
        await self.replies.send(event, caption, card_id=view.card.id, attachment_id=kept.id)

    async def _view(self, origin: Origin, slug: str) -> CardView | None:
        try:
            return await self.board.reads.view(slug)
        except UnknownCard:
            await self.replies.unknown_card(origin.event, slug)
            return None
