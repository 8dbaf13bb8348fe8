"""Files and voice notes people send: fetched only for people who count, then kept.

The intake calls this only after its checks (authority, rate limit, the device): a
stranger's file is never fetched. Each file is fetched through its transport with the
configured size limit (the transport stops the download there) and handed to the
board, which sniffs its type from the bytes and keeps it content-addressed. One file
that fails fails the whole message, said with the reason: a steer must not reach the
agent without the screenshot it talks about.

A voice note goes to the configured speech-to-text service; what was heard takes the
place of the message's text, and the bot says what it heard.
"""

from __future__ import annotations

import dataclasses
import logging

from chatbot.board import Attachment, FileRefused
from chatbot.board.file_kinds import FileKind, NotTaken, identify
from chatbot.board.file_names import size_words
from chatbot.board.ports import ChatSide
from chatbot.chat.replies import Origin, Replies, chat_of
from chatbot.chat.texts import say
from chatbot.chat.voice import Transcriber, TranscriptionFailed, as_command
from chatbot.transports.base import IncomingMessage
from chatbot.transports.files import FileFetchError, IncomingFile

log = logging.getLogger(__name__)


def described(files: tuple[Attachment, ...] | list[Attachment], locale: str) -> str:
    """ "screenshot.png (45 KB picture), build.log (3 KB text file)"."""
    return ", ".join(
        f"{file.name} ({size_words(file.size)} {say(locale, f'file_kind_{file.kind.value}')})"
        for file in files
    )


class FilesIn:
    def __init__(
        self,
        board: ChatSide,
        replies: Replies,
        *,
        max_bytes: int,
        transcriber: Transcriber | None = None,
    ) -> None:
        self.board = board
        self.replies = replies
        self.max_bytes = max_bytes
        self.transcriber = transcriber

    # --- voice ---------------------------------------------------------------------

    async def hear(self, event: IncomingMessage) -> IncomingMessage | None:
        """The message with its voice note turned into text (the heard command in its
        written form), or None when it could not be heard (the sender was told)."""
        voice = next(file for file in event.files if file.voice)
        others = tuple(file for file in event.files if file is not voice)
        if self.transcriber is None:
            await self.replies.say(event, "voice_off", purpose="refusal")
            return None
        limit = min(self.max_bytes, self.transcriber.max_bytes)
        try:
            data = await voice.fetch(limit)
        except FileFetchError as error:
            await self.replies.say(event, "voice_failed", reason=str(error), purpose="refusal")
            return None
        # The service is told what the bytes are, never what the sender said they were.
        try:
            found = identify(data)
        except NotTaken as error:
            found = None
            looked = error.looked
        if found is None or found.kind is not FileKind.AUDIO:
            looked = found.looked if found is not None else looked
            await self.replies.say(event, "voice_not_audio", looked=looked, purpose="refusal")
            return None
        try:
            heard = await self.transcriber.transcribe(
                data, content_type=found.content_type, name=f"voice{found.extension}"
            )
        except TranscriptionFailed as error:
            log.info("voice note %s not heard: %s", event.envelope.message_id, error)
            await self.replies.say(event, "voice_failed", reason=str(error), purpose="refusal")
            return None
        await self.replies.say(event, "voice_heard", heard=heard)
        text = as_command(heard, self.replies.prefix)
        if event.text.strip():
            text = f"{event.text.strip()} {text}"
        return dataclasses.replace(event, text=text, files=others)

    # --- other files -----------------------------------------------------------------

    async def keep(self, origin: Origin) -> tuple[Attachment, ...] | None:
        """Every file of the origin's message fetched and kept, or None when one failed
        (the sender was told which and why; nothing was attached)."""
        event = origin.event
        assert isinstance(event, IncomingMessage)
        kept: list[Attachment] = []
        where = chat_of(event)
        origin_of = {"transport": where["transport"], "chat": where["target"]}
        for file in event.files:
            try:
                kept.append(
                    await self._keep_one(
                        file, origin, origin_of | {"message_id": event.envelope.message_id}
                    )
                )
            except (FileFetchError, FileRefused) as error:
                log.info("file %r of %s not taken: %s", file.name, event.envelope.message_id, error)
                name = file.name or "the file"
                await self.replies.say(
                    event, "file_not_taken", name=name, reason=str(error), purpose="refusal"
                )
                return None
        return tuple(kept)

    async def _keep_one(
        self, file: IncomingFile, origin: Origin, origin_of: dict[str, str]
    ) -> Attachment:
        data = await file.fetch(self.max_bytes)
        return await self.board.files.keep(
            data,
            name=file.name,
            declared_type=file.declared_type,
            actor=origin.actor,
            origin=origin_of,
            encrypted=file.encrypted,
        )
