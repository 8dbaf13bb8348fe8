"""What the runs cost and where they belong: `/runs [pipeline]`, `/budget`, `/allow`.

A part of ChatHandlers (the command table names these methods like any other).
`/allow <slug>` goes on past a card's spent budget (its stopped step again, with one
more card budget); `/allow` alone lets today's held runs start (one more day budget).
"""

from __future__ import annotations

from chatbot.board import UnknownCard
from chatbot.board.budget import budget_stopped
from chatbot.chat import render_spend
from chatbot.chat.commands import CommandCall
from chatbot.chat.host import Facet
from chatbot.chat.render import runs as render_jobs
from chatbot.chat.replies import Origin
from chatbot.domain.transitions import Action


class SpendHandlers(Facet):
    async def runs(self, origin: Origin, invocation: CommandCall) -> None:
        """The queued and running jobs, or the runs of one pipeline (an id or a card)."""
        wanted = invocation.text("pipeline")
        if not wanted:
            jobs = await self.board.reads.active_jobs()
            text = render_jobs(jobs, await self.board.reads.job_slugs(), self.locale)
        else:
            pipeline, found = await self.board.reads.pipeline_runs(wanted)
            text = render_spend.pipeline_runs(pipeline, found, self.locale)
        await self.replies.send(origin.event, text)

    async def budget(self, origin: Origin, invocation: CommandCall) -> None:
        report = await self.board.budget.spend_report()
        await self.replies.send(origin.event, render_spend.budget(report, self.locale))

    async def allow(self, origin: Origin, invocation: CommandCall) -> None:
        slug = invocation.text("slug")
        event = origin.event
        if not slug:
            state = await self.board.budget.allow_day()
            if state is None:
                await self.replies.say(event, "no_day_budget", purpose="refusal")
                return
            limit, spent = render_spend.usd(state.limit), render_spend.usd(state.spent)
            await self.replies.say(event, "day_allowed", limit=limit, spent=spent)
            return
        try:
            card = await self.board.reads.card(slug)
        except UnknownCard:
            await self.replies.unknown_card(event, slug)
            return
        if budget_stopped(card) is None:
            await self.replies.say(event, "not_budget_stopped", slug=slug, purpose="refusal")
            return
        await self.host.act(origin, slug, Action.ALLOW, reason="another card budget allowed")
