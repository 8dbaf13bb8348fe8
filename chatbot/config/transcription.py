"""[transcription]: the OpenAI-compatible speech-to-text endpoint voice notes go to.

Without this section a voice note is not sent anywhere: the bot says how to turn it
on. The key is only a file's path here; it is read when the bot starts and goes only
into the request's Authorization header.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from chatbot.config.base import Section
from runners.runtimes.base import BASE_URL_PATTERN


class TranscriptionSection(Section):
    # The API's base, e.g. https://api.openai.com/v1; the bot posts to
    # <base_url>/audio/transcriptions (multipart: file, model).
    base_url: str = Field(pattern=BASE_URL_PATTERN)
    # The speech model, e.g. whisper-1 or gpt-4o-mini-transcribe.
    model: str = Field(default="whisper-1", pattern=r"^[A-Za-z0-9][A-Za-z0-9._:/-]{0,79}$")
    # A file holding the API key (Bearer); none for an endpoint without keys (a local one).
    api_key_file: Path | None = None
    # The language spoken, as ISO-639-1 ("en", "de"); empty: the service guesses.
    language: str = Field(default="", pattern=r"^([a-z]{2})?$")
    # How long one transcription may take.
    timeout_s: float = Field(default=60.0, gt=0, le=600)
    # Voice notes longer than this many bytes are not sent (a minute of Opus is ~100 KB).
    max_size_mb: int = Field(default=10, ge=1, le=25)
