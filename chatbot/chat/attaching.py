"""Files for cards: `/attach <slug>`, a file sent as a reply to a card's message, and a
file that names nothing yet (kept for `keep_loose_minutes` until a command names it).

On a phone an XMPP client sends a file as a message of its own, with no caption, so
the command that says which card usually comes right after it: `/attach`, `/steer`,
`/draft` and `/answer` take the sender's loose files when their own message has none.
"""

from __future__ import annotations

from chatbot.board import Attachment, AttachPurpose, UnknownCard
from chatbot.chat.commands import CommandCall
from chatbot.chat.files_in import described
from chatbot.chat.host import Facet
from chatbot.chat.replies import Origin
from chatbot.transports.networks import takes_files


class AttachHandlers(Facet):
    @property
    def loose_minutes(self) -> int:
        return self.config.files.keep_loose_minutes if self.config is not None else 30

    async def files_of(self, origin: Origin) -> tuple[Attachment, ...]:
        """The files sent with the message, or else the sender's loose ones."""
        if origin.files:
            return origin.files
        return tuple(await self.board.files.loose(origin.actor))

    def files_said(self, files: tuple[Attachment, ...]) -> str:
        return described(files, self.locale)

    async def attach(self, origin: Origin, invocation: CommandCall) -> None:
        slug, event = invocation.text("slug"), origin.event
        files = await self.files_of(origin)
        if not files:
            try:
                await self.board.reads.card(slug)
            except UnknownCard:
                await self.replies.unknown_card(event, slug)
                return
            if not takes_files(event.envelope.transport):
                await self.replies.say(event, "files_not_here", purpose="refusal")
                return
            await self.replies.say(event, "files_nothing", slug=slug, minutes=self.loose_minutes)
            return
        await self._attach(origin, slug, files)

    async def attach_to(self, origin: Origin, slug: str) -> None:
        """A file sent as a reply to a card's message, or with a command naming a card."""
        await self._attach(origin, slug, origin.files)

    async def _attach(self, origin: Origin, slug: str, files: tuple[Attachment, ...]) -> None:
        try:
            attached = await self.board.files.attach(
                [file.id for file in files], slug, purpose=AttachPurpose.CARD, actor=origin.actor
            )
        except UnknownCard:
            await self.replies.unknown_card(origin.event, slug)
            return
        card = await self.board.reads.card(slug)
        text = self.replies.text(
            "files_attached", slug=slug, files=self.files_said(tuple(attached))
        )
        await self.replies.send(origin.event, text, card_id=card.id)

    async def keep_loose(self, origin: Origin) -> None:
        """Kept already (the intake did it); say so, and how to give them to a card."""
        text = self.replies.text(
            "files_loose", files=self.files_said(origin.files), minutes=self.loose_minutes
        )
        await self.replies.send(origin.event, text)
