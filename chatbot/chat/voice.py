"""Voice notes into words: an OpenAI-compatible `/audio/transcriptions` endpoint.

The key is read by the wiring (chatbot/app) and handed in; it goes only into the
request's Authorization header.

The heard text takes the place of the message's text, so a spoken "slash status" is
the command `/status`; the bot says what it heard, so a misheard command can be
corrected. Spoken commands come out with words for the prefix ("slash start ..."),
which `as_command` turns back into the written form.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass

import aiohttp

from chatbot.config.transcription import TranscriptionSection

log = logging.getLogger(__name__)

#: What a transcription may give back as a message's text.
MAX_HEARD_CHARS = 4000

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069]")
# "Slash status." / "Slash, start login-page" / "Schrägstrich status": the prefix
# spoken as a word, and the full stop speech models add at the end.
_SPOKEN_PREFIX = re.compile(r"^\s*(slash|schrägstrich|schraegstrich)[\s,.:]+", re.IGNORECASE)


class TranscriptionFailed(Exception):
    """Why a voice note could not be turned into words, fit for the chat."""


@dataclass(frozen=True)
class Transcriber:
    base_url: str
    model: str
    language: str
    timeout_s: float
    max_bytes: int
    key: str | None = None

    @classmethod
    def from_section(cls, section: TranscriptionSection, key: str | None) -> Transcriber:
        """`key` is the text of `section.api_key_file`, read by whoever wires the bot."""
        return cls(
            base_url=section.base_url.rstrip("/"),
            model=section.model,
            language=section.language,
            timeout_s=section.timeout_s,
            max_bytes=section.max_size_mb * 1024 * 1024,
            key=key,
        )

    def __repr__(self) -> str:  # the key never reaches a log line
        return f"Transcriber({self.base_url!r}, model={self.model!r})"

    async def transcribe(self, data: bytes, *, content_type: str, name: str) -> str:
        if len(data) > self.max_bytes:
            raise TranscriptionFailed(
                f"the voice note is {len(data) // 1024} KB, more than the "
                f"{self.max_bytes // (1024 * 1024)} MB [transcription] takes"
            )
        form = aiohttp.FormData()
        form.add_field("file", data, filename=name or "voice.ogg", content_type=content_type)
        form.add_field("model", self.model)
        form.add_field("response_format", "json")
        if self.language:
            form.add_field("language", self.language)
        headers = {"Authorization": f"Bearer {self.key}"} if self.key else {}
        url = f"{self.base_url}/audio/transcriptions"
        timeout = aiohttp.ClientTimeout(total=self.timeout_s)
        try:
            async with aiohttp.ClientSession(timeout=timeout, trust_env=False) as session:
                async with session.post(url, data=form, headers=headers) as response:
                    body = await response.content.read(64 * 1024)
                    status = response.status
        except TimeoutError:
            raise TranscriptionFailed(
                f"the transcription service took longer than {self.timeout_s:g} s"
            ) from None
        except aiohttp.ClientError as error:
            raise TranscriptionFailed(
                f"the transcription service could not be reached ({type(error).__name__})"
            ) from None
        if status != 200:
            raise TranscriptionFailed(f"the transcription service answered HTTP {status}")
        try:
            text = json.loads(body)["text"]
        except (ValueError, KeyError, TypeError):
            raise TranscriptionFailed("the transcription service's answer had no text") from None
        if not isinstance(text, str):
            raise TranscriptionFailed("the transcription service's answer had no text")
        heard = " ".join(_CONTROL.sub(" ", text).split())[:MAX_HEARD_CHARS]
        if not heard:
            raise TranscriptionFailed("nothing was heard in the voice note")
        return heard


def as_command(heard: str, prefix: str) -> str:
    """A spoken command in its written form: "Slash status." -> "/status"; other words
    stay as they were heard."""
    match = _SPOKEN_PREFIX.match(heard)
    if match is None:
        return heard
    rest = heard[match.end() :].strip()
    words = rest.split(maxsplit=1)
    if not words:
        return heard
    name = words[0].strip(".,!?").lower()
    tail = words[1].rstrip(".") if len(words) > 1 else ""
    return f"{prefix}{name}" + (f" {tail}" if tail else "")
