"""Voice notes: a scripted speech-to-text endpoint on 127.0.0.1 hears them (issue 36).

The endpoint is a real HTTP server speaking the OpenAI `/v1/audio/transcriptions` form
(multipart: file, model; a Bearer key); the voice note is an Ogg/Opus file made in
the test. What it hears becomes the message: "Slash status." is /status.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import pytest
from aiohttp import web

from chatbot.chat.voice import Transcriber, as_command
from chatbot.config.transcription import TranscriptionSection
from tests.media.made import ogg_opus, png

from .conftest import Env, dm, make_env
from .test_files import with_file

KEY = "sk-test-transcription-key"


@dataclass
class Heard:
    says: str = "Slash status."
    status: int = 200
    got: list[dict] = field(default_factory=list)


@pytest.fixture
async def speech() -> AsyncIterator[tuple[str, Heard]]:
    heard = Heard()

    async def transcribe(request: web.Request) -> web.Response:
        form = await request.post()
        upload = form["file"]
        assert isinstance(upload, web.FileField)
        heard.got.append(
            {
                "auth": request.headers.get("Authorization"),
                "model": form.get("model"),
                "bytes": upload.file.read(),
                "type": upload.content_type,
            }
        )
        if heard.status != 200:
            return web.Response(status=heard.status, text="no")
        return web.json_response({"text": heard.says})

    app = web.Application()
    app.router.add_post("/v1/audio/transcriptions", transcribe)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    yield f"http://127.0.0.1:{port}/v1", heard
    await runner.cleanup()


def _transcriber(base_url: str) -> Transcriber:
    section = TranscriptionSection(base_url=base_url, model="whisper-1")
    return Transcriber.from_section(section, KEY)


@pytest.fixture
def voiced(store, tmp_path, speech) -> tuple[Env, Heard]:
    base_url, heard = speech
    return make_env(store, tmp_path, transcriber=_transcriber(base_url)), heard


async def test_a_voice_note_becomes_the_status_command_and_says_what_it_heard(voiced) -> None:
    env, heard = voiced
    note = ogg_opus()
    rows = await env.said(with_file(dm(""), note, name="voice.ogg", voice=True))
    assert rows[0].text == "🎙 heard: Slash status."
    # The same answer as the typed command.
    await env.card("login")
    typed = await env.one(dm("/status"))
    rows = await env.said(with_file(dm(""), note, name="voice.ogg", voice=True))
    assert [row.text for row in rows] == ["🎙 heard: Slash status.", typed.text]
    assert "login" in typed.text
    # The service got the note's bytes, typed by what they are (the sender said image/png).
    assert heard.got[0] == {
        "auth": f"Bearer {KEY}",
        "model": "whisper-1",
        "bytes": note,
        "type": "audio/ogg",
    }


async def test_a_failing_service_answers_with_the_reason_and_a_way_on(voiced) -> None:
    env, heard = voiced
    heard.status = 503
    row = await env.one(with_file(dm(""), ogg_opus(), name="voice.ogg", voice=True))
    assert "could not be heard" in row.text and "HTTP 503" in row.text
    assert "Write it instead" in row.text


async def test_a_voice_note_that_is_no_audio_is_not_sent_anywhere(voiced) -> None:
    env, heard = voiced
    row = await env.one(with_file(dm(""), png(), name="voice.ogg", voice=True))
    assert "was not audio" in row.text
    assert heard.got == []


def test_spoken_commands_are_written_back() -> None:
    assert as_command("Slash status.", "/") == "/status"
    assert as_command("slash, start login-page.", "/") == "/start login-page"
    assert as_command("Schrägstrich inbox", "!") == "!inbox"
    assert as_command("the login is broken", "/") == "the login is broken"
