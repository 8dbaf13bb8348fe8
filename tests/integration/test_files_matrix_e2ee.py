"""Files in an encrypted Matrix room, end to end (issue 36, "Must show"): the real bot
process on the real Synapse, the owner (and a stranger) real E2EE clients.

- an encrypted picture sent with the caption `/draft ...` reaches the planner, the real
  codex talking to a scripted provider: the picture's bytes are in its model request;
- a long `/diff` also comes as a `.patch`, an encrypted file the owner's client
  decrypts to exactly the card's patch;
- an encrypted voice note goes to a scripted transcription endpoint and becomes
  `/status`, "heard" said first, every answer encrypted;
- a stranger's encrypted picture is neither fetched (the bot's every request to its
  homeserver passes a recording proxy here) nor kept.

Every "encrypted" is the owner's client's own word: the event came as
m.room.encrypted and it decrypted it; an attachment it opened with the keys its event
carried.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import aiohttp
import pytest
import yarl
from aiohttp import web

from chatbot.board.reads import change_base
from chatbot.store.card_data import CardData
from runners.diff_files import patch_of
from tests.integration.bot_process import BotProcess, bot_config, prepare, write_scenario
from tests.integration.matrix_e2ee_peer import E2eePeer
from tests.integration.matrix_peer import media_content, upload
from tests.integration.test_e2ee_matrix import (
    APPROVE,
    INTENT,
    bot_device,
    bot_id,
    bot_says,
    replied_to,
)
from tests.media.made import ogg_opus, png
from tests.pipeline.harness import builder_answer, direct
from tests.realcli.clis import CLIS
from tests.realcli.harness import config_text, write_secrets
from tests.realcli.providers import Say, ScriptedModel
from tests.realcli.test_images_real import pictures_in

WITHIN = 30.0
# Element's MSC3245 voice note marker.
VOICE = "org.matrix.msc3245.voice"
STT_KEY = "sk-test-stt-key-36"


# --- the bot in an encrypted room ----------------------------------------------------------


def with_homeserver(info: dict[str, Any], homeserver: str) -> dict[str, Any]:
    """The servers' description with the bot's homeserver URL replaced (a proxy's)."""
    return {**info, "matrix": {**info["matrix"], "homeserver": homeserver}}


async def bot_in_room(
    tmp_path: Path,
    servers,
    owner: E2eePeer,
    config: Path,
    room: str,
) -> BotProcess:
    """The bot process started with `config`, in the owner's encrypted `room`, its
    device known to the owner's client."""
    bot = bot_id(servers)
    process = await BotProcess(tmp_path, config).start()
    await process.logged(r"matrix transport online", within=WITHIN)
    await owner.until(lambda: bot in owner.client.rooms[room].users, within=WITHIN)
    await owner.devices_of(bot, bot_device(process, bot), within=WITHIN)
    return process


def scripted_config(
    tmp_path: Path,
    info: dict[str, Any],
    room: str,
    turns: list[dict[str, Any]],
    intents: dict[str, str],
    extra: str = "",
) -> Path:
    """The bot with the scripted stand-in CLIs (tests/bin), in `room` only."""
    prepare(tmp_path, intents)
    write_scenario(tmp_path, turns)
    return bot_config(tmp_path, info, xmpp=False, matrix=True, matrix_rooms=(room,), extra=extra)


def real_codex_config(
    tmp_path: Path,
    info: dict[str, Any],
    room: str,
    bins: dict[str, Path],
    models: dict[str, ScriptedModel],
) -> Path:
    """Every role (the planner too) on the REAL codex, its base_url the scripted provider
    of the test; the owner the Matrix owner; the bot in `room`."""
    prepare(tmp_path, {})
    write_secrets(tmp_path)
    for name in CLIS:
        (tmp_path / "home" / name).mkdir(parents=True, exist_ok=True)
    m = info["matrix"]
    (tmp_path / "secrets" / "matrix").write_text(m["accounts"]["bot"]["password"])
    text = config_text("codex", bins, {name: model.base_url for name, model in models.items()})
    owners = 'owners = ["owner@example.org"]'
    assert owners in text
    text = text.replace(owners, f"owners = {json.dumps([m['accounts']['owner']['user_id']])}")
    text += "\n".join(
        [
            "",
            "[matrix]",
            f'homeserver = "{m["homeserver"]}"',
            f'user_id = "{m["accounts"]["bot"]["user_id"]}"',
            'password_file = "secrets/matrix"',
            f"rooms = {json.dumps([room])}",
            "",
        ]
    )
    path = tmp_path / "bot.toml"
    path.write_text(text)
    return path


async def bot_messages_until(
    peer: E2eePeer, room: str, bot: str, pattern: str
) -> list[dict[str, Any]]:
    """The bot's messages in `room`, in the order they came, up to the first whose body
    matches `pattern` (that one last)."""
    regex = re.compile(pattern, re.S)
    seen: list[dict[str, Any]] = []

    def take(r: str, ev: dict[str, Any]) -> bool:
        if r != room or ev.get("sender") != bot or ev.get("type") != "m.room.message":
            return False
        seen.append(ev)
        return bool(regex.search((ev.get("content") or {}).get("body", "")))

    await peer.expect(take, within=WITHIN)
    return seen


def in_clear(peer: E2eePeer, room: str, bot: str) -> list[str]:
    """The bodies of the bot's messages in `room` that reached `peer` unencrypted, of
    those received and not taken yet (they are taken now)."""
    found = []
    while not peer.inbox.empty():
        r, ev = peer.inbox.get_nowait()
        if r == room and ev.get("sender") == bot and ev.get("type") == "m.room.message":
            found.append(ev)
    return [ev["content"].get("body", "") for ev in found if not ev["_decrypted"]]


def files_kept(root: Path) -> list[Path]:
    """The files in the bot's files folder (`files/` beside its SQLite file)."""
    folder = root / "files"
    return sorted(p for p in folder.rglob("*") if p.is_file()) if folder.exists() else []


async def send_voice(peer: E2eePeer, room: str, data: bytes) -> str:
    """An encrypted voice note as Element sends one: m.audio with the MSC3245 marker,
    the body the file's name and no caption."""
    url, keys = await upload(
        peer.client, data, name="Voice message.ogg", mimetype="audio/ogg", encrypt=True
    )
    content = media_content(
        "m.audio", url, name="Voice message.ogg", mimetype="audio/ogg", size=len(data), keys=keys
    )
    content[VOICE] = {}
    content["info"]["duration"] = 1000
    return await peer.send(room, content)


async def send_image(
    peer: E2eePeer, room: str, data: bytes, name: str, caption: str
) -> tuple[str, str]:
    """An encrypted PNG with a caption (MSC2530), as Element sends one: (event id, its
    mxc URI)."""
    url, keys = await upload(peer.client, data, name=name, mimetype="image/png", encrypt=True)
    content = media_content(
        "m.image", url, name=name, mimetype="image/png", size=len(data), keys=keys, caption=caption
    )
    return await peer.send(room, content), url


# --- loopback services --------------------------------------------------------------------


@dataclass
class Speech:
    """A scripted OpenAI-compatible `/v1/audio/transcriptions` endpoint on 127.0.0.1."""

    says: str = "Slash status."
    got: list[dict[str, Any]] = field(default_factory=list)
    url: str = ""
    _runner: web.AppRunner | None = None

    async def start(self) -> Speech:
        app = web.Application()
        app.router.add_post("/v1/audio/transcriptions", self._transcribe)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.url = f"http://127.0.0.1:{self._runner.addresses[0][1]}/v1"
        return self

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def _transcribe(self, request: web.Request) -> web.Response:
        form = await request.post()
        upload = form["file"]
        assert isinstance(upload, web.FileField)
        self.got.append(
            {
                "auth": request.headers.get("Authorization"),
                "model": form.get("model"),
                "type": upload.content_type,
                "bytes": upload.file.read(),
            }
        )
        return web.json_response({"text": self.says})


# Hop-by-hop headers, and those the proxy's own response sets itself.
_NOT_FORWARDED = frozenset(
    {"connection", "keep-alive", "transfer-encoding", "content-length", "host", "upgrade"}
)


class RecordingProxy:
    """A loopback reverse proxy in front of Synapse for the bot alone: every request the
    bot makes to its homeserver (syncs, keys, sends, media) passes here, and its path is
    recorded. The ground truth of what the bot downloaded."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.rstrip("/")
        self.paths: list[str] = []
        self._runner: web.AppRunner | None = None
        self._session: aiohttp.ClientSession | None = None
        self.url = ""

    async def start(self) -> RecordingProxy:
        # The body goes through as it came (compressed or not).
        self._session = aiohttp.ClientSession(auto_decompress=False)
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("*", "/{tail:.*}", self._forward)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.url = f"http://127.0.0.1:{self._runner.addresses[0][1]}"
        return self

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
        if self._session is not None:
            await self._session.close()

    async def _forward(self, request: web.Request) -> web.Response:
        assert self._session is not None
        self.paths.append(request.raw_path)
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _NOT_FORWARDED}
        try:
            async with self._session.request(
                request.method,
                yarl.URL(self.upstream + request.raw_path, encoded=True),
                headers=headers,
                data=await request.read(),
                allow_redirects=False,
            ) as upstream:
                body = await upstream.read()
                status = upstream.status
                back = {
                    k: v for k, v in upstream.headers.items() if k.lower() not in _NOT_FORWARDED
                }
        except aiohttp.ClientError:
            # The proxy is stopping under the bot's last long poll: as a gateway says it.
            return web.Response(status=502)
        return web.Response(status=status, body=body, headers=back)

    def fetched(self, mxc: str) -> bool:
        """Whether the bot asked its homeserver for the file `mxc` (any media endpoint)."""
        media_id = mxc.rsplit("/", 1)[1]
        return any("/media/" in path and media_id in path for path in self.paths)


@pytest.fixture
async def peers(matrix_info: dict[str, Any], tmp_path: Path):
    """Real E2EE clients by account ("owner", "stranger"), each with its crypto store."""
    made: list[E2eePeer] = []

    async def make(account: str) -> E2eePeer:
        acc = matrix_info["accounts"][account]
        store = tmp_path / f"peer-{account}"
        peer = E2eePeer(matrix_info["homeserver"], acc["user_id"], acc["password"], store)
        made.append(peer)
        return await peer.start()

    yield make
    for peer in made:
        await peer.stop()


@pytest.fixture
async def speech() -> AsyncIterator[Speech]:
    found = await Speech().start()
    yield found
    await found.stop()


@pytest.fixture
async def proxy(servers) -> AsyncIterator[RecordingProxy]:
    found = await RecordingProxy(servers.info["matrix"]["homeserver"]).start()
    yield found
    await found.stop()


# --- the tests ----------------------------------------------------------------------------


async def test_an_encrypted_picture_with_a_draft_caption_reaches_the_real_planner(
    tmp_path: Path, servers, peers, cli_bins, models
) -> None:
    owner = await peers("owner")
    bot = bot_id(servers)
    room = await owner.create_encrypted_room(invite=(bot,))
    config = real_codex_config(tmp_path, servers.info, room, cli_bins, models)
    planner = models["codex"]
    planner.script(
        Say(
            "===DRAFT-QUESTION===\nWhich button is wrong on it?\noptions: Log in | Sign up\n"
            "===END-DRAFT-QUESTION==="
        )
    )
    process = await bot_in_room(tmp_path, servers, owner, config, room)
    try:
        screenshot = png(5, 7, (10, 200, 90))
        sent = await owner.send_file(
            room,
            screenshot,
            name="login.png",
            mimetype="image/png",
            msgtype="m.image",
            caption="/draft the login page looks broken, see the screenshot",
        )
        ack = await bot_says(owner, room, bot, r"Draft \S+ started")
        assert ack["_decrypted"] and replied_to(ack) == sent
        assert "With login.png (" in ack["content"]["body"], ack["content"]["body"]
        slug = re.search(r"Draft (\S+) started", ack["content"]["body"])[1]

        question = await bot_says(owner, room, bot, r"Which button is wrong on it\?")
        assert question["_decrypted"]
        assert process.phase(slug) == "draft_question"

        (seen,) = planner.seen
        # The decrypted picture, exactly, as the model's input image.
        assert pictures_in(seen.body) == [screenshot]
        assert "the login page looks broken, see the screenshot" in seen.prompt
        assert "login.png" in seen.prompt
        (kept,) = process.query(
            "SELECT a.sha256, a.kind, a.purpose, a.actor FROM attachments a "
            "JOIN cards c ON c.id = a.card_id WHERE c.slug = ?",
            (slug,),
        )
        assert (kept["sha256"], kept["kind"], kept["purpose"]) == (
            hashlib.sha256(screenshot).hexdigest(),
            "image",
            "draft",
        )
        # Kept decrypted in the bot's files folder only, content-addressed, 0600.
        (blob,) = files_kept(tmp_path)
        assert blob.name == kept["sha256"] and blob.read_bytes() == screenshot
        assert blob.stat().st_mode & 0o777 == 0o600
    finally:
        await process.stop()


async def test_a_long_diff_comes_as_an_encrypted_patch_the_owner_decrypts_exactly(
    tmp_path: Path, servers, peers
) -> None:
    # 80 lines: more than one file post shows, so /diff also sends the .patch.
    source = "".join(f"total_{n} = {n} * 3  # line {n}\n" for n in range(80))
    turns = [
        {"match": "OPERATOR-DECISION", "answer": direct("light")},
        {
            "match": "COMMIT-MESSAGE",
            "cli": "codex",
            "answer": builder_answer("Add the report totals"),
            "files": {"report.py": source},
        },
        APPROVE,
    ]
    owner = await peers("owner")
    bot = bot_id(servers)
    room = await owner.create_encrypted_room(invite=(bot,))
    config = scripted_config(tmp_path, servers.info, room, turns, {"report": INTENT})
    process = await bot_in_room(tmp_path, servers, owner, config, room)
    try:
        await owner.say(room, "/start report")
        await bot_says(owner, room, bot, r"review approve")
        card = process.card("report")
        commit = card["commit_hash"]
        assert card["phase"] == "ready_for_deployment" and commit

        asked = await owner.say(room, "/diff report")
        _, event = await owner.expect(
            lambda r, ev: (
                r == room
                and ev.get("sender") == bot
                and (ev.get("content") or {}).get("msgtype") == "m.file"
            ),
            within=WITHIN,
        )
        content = event["content"]
        assert event["_decrypted"], "the .patch went out in clear in an encrypted room"
        assert "url" not in content and set(content["file"]) >= {"url", "key", "iv", "hashes"}
        assert content["filename"] == f"report-{commit[:12]}.patch"
        assert content["body"].startswith("📎 report: the whole change as one file")
        # The board types what it keeps by its bytes: a patch is UTF-8 text.
        assert content["info"]["mimetype"] == "text/plain"
        assert replied_to(event) == asked

        got = await owner.fetch_file(content)
        repo = tmp_path / "repo"
        # The board's patch: the card's commit against its base, as the board finds it ...
        data = CardData.read(json.loads(card["data"]), "report")
        base = change_base(SimpleNamespace(data=data, commit_hash=commit))
        board_patch, cut = await patch_of(repo, commit, base)
        assert not cut
        assert got == board_patch.encode()
        # ... which is git's own diff of the commit, with the 80 lines in it.
        plain = subprocess.run(
            ["git", "diff", "-M", base or f"{commit}^", commit],
            cwd=repo,
            capture_output=True,
            check=True,
        ).stdout
        assert got == plain
        assert got.count(b"\n+total_") == 80
        # The media repository holds only ciphertext.
        stored = await owner.client.download(mxc=content["file"]["url"])
        assert stored.body != got and len(stored.body) == len(got)
        # The file's own page comes after the .patch; nothing of /diff went out in clear.
        await bot_says(owner, room, bot, r"📄 1/1 report\.py")
        assert in_clear(owner, room, bot) == []
    finally:
        await process.stop()


async def test_an_encrypted_voice_note_is_heard_and_answered_as_status(
    tmp_path: Path, servers, peers, speech: Speech
) -> None:
    (tmp_path / "secrets").mkdir(exist_ok=True)
    (tmp_path / "secrets" / "stt-key").write_text(STT_KEY + "\n")
    transcription = (
        f'[transcription]\nbase_url = "{speech.url}"\nmodel = "whisper-1"\n'
        'api_key_file = "secrets/stt-key"\n'
    )
    owner = await peers("owner")
    bot = bot_id(servers)
    room = await owner.create_encrypted_room(invite=(bot,))
    config = scripted_config(
        tmp_path, servers.info, room, [], {"report": INTENT}, extra=transcription
    )
    process = await bot_in_room(tmp_path, servers, owner, config, room)
    try:
        note = ogg_opus()
        sent = await send_voice(owner, room, note)
        said = await bot_messages_until(owner, room, bot, r"Cards by phase")
        bodies = [ev["content"]["body"] for ev in said]
        heard, status = said[-2:]
        assert heard["content"]["body"] == "🎙 heard: Slash status.", bodies
        assert "planned: report" in status["content"]["body"]
        for answer in (heard, status):
            assert answer["_decrypted"], f"answered in clear: {answer['content']['body']!r}"
            assert replied_to(answer) == sent
        # The endpoint got the note decrypted, exactly, said to be Ogg by its bytes.
        (got,) = speech.got
        assert got["bytes"] == note
        assert (got["auth"], got["model"], got["type"]) == (
            f"Bearer {STT_KEY}",
            "whisper-1",
            "audio/ogg",
        )
    finally:
        await process.stop()


async def test_a_strangers_encrypted_picture_is_neither_fetched_nor_kept(
    tmp_path: Path, servers, peers, proxy: RecordingProxy
) -> None:
    owner = await peers("owner")
    stranger = await peers("stranger")
    bot = bot_id(servers)
    room = await owner.create_encrypted_room(invite=(bot, stranger.user_id))
    # The bot reaches its homeserver only through the recording proxy.
    info = with_homeserver(servers.info, proxy.url)
    config = scripted_config(tmp_path, info, room, [], {"report": INTENT})
    process = await bot_in_room(tmp_path, servers, owner, config, room)
    try:
        await stranger.join(room)
        await stranger.devices_of(bot, bot_device(process, bot), within=WITHIN)
        theirs = png(6, 6, (255, 0, 0))
        poke, url = await send_image(stranger, room, theirs, "evil.png", "/attach report")
        refusal = await bot_says(stranger, room, bot, r"may not use this bot")
        assert refusal["_decrypted"] and replied_to(refusal) == poke
        assert not proxy.fetched(url), "the bot downloaded a stranger's file"
        assert files_kept(tmp_path) == []
        assert process.query("SELECT id FROM attachments") == []

        # The owner's file, the same way, is fetched and kept: the proxy and the folder
        # would have shown the stranger's.
        mine = png(6, 6, (0, 0, 255))
        sent, my_url = await send_image(owner, room, mine, "mine.png", "/attach report")
        attached = await bot_says(owner, room, bot, r"📎 report: attached mine\.png")
        assert attached["_decrypted"] and replied_to(attached) == sent
        assert proxy.fetched(my_url), "the proxy saw no download of the owner's file"
        assert not proxy.fetched(url), "the bot downloaded a stranger's file"
        digest = hashlib.sha256(mine).hexdigest()
        assert [p.name for p in files_kept(tmp_path)] == [digest]
        (row,) = process.query("SELECT sha256, actor FROM attachments")
        assert (row["sha256"], row["actor"]) == (digest, f"matrix:{owner.user_id}")
    finally:
        await process.stop()
