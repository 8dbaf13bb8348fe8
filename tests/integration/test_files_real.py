"""Files in chat, end to end (issue 36, "Must show"): the real bot process over the real
Prosody and its real upload service (mod_http_file_share), the owner's real XMPP client
uploading as Conversations does (XEP-0363, then the link with Out of Band Data), the REAL
codex and claude as the builder pointed at scripted loopback providers
(tests/integration/talk_bot.py). What a provider received is what reached the agent.

The upload service is on loopback, so the bot is told to fetch from it (`[xmpp]
upload_hosts`); every other loopback address stays refused. Whether the bot fetched a
link at all is read from a small recording HTTP server (`Recorder`), listed or not.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from chatbot.transports.xmpp import oob
from chatbot.transports.xmpp import outgoing as out
from runners import run_files
from tests.integration.e2e import BOT_NICK, bot_says_directly, reply_target, stanza_id
from tests.integration.talk_bot import TALKING, committed, finish, start
from tests.media.made import png, png_bomb
from tests.realcli.providers import Seen, Shell, WriteFile
from tests.realcli.test_images_real import pictures_in

SLUG = "indent"
# A picture no CLI re-encodes (small, plain RGB), distinct from any other test's.
PICTURE = png(12, 7, (10, 160, 90))
# Read by the agent's command while the owner steers; the test releases it.
FIFO = "release.fifo"
WAIT = f"head -n 1 {FIFO}"


@pytest.fixture
def begin(tmp_path: Path, servers, xmpp_peer, cli_bins, models):
    """`start` on this test's folder with the real upload service listed (it is on
    loopback, which the bot refuses unless listed), and `extra_hosts` beside it."""
    info = servers.info["xmpp"]

    def begin(cli: str, *, extra_hosts: tuple[str, ...] = (), **options: Any):
        hosts = [f"localhost:{info['http_port']}", *extra_hosts]
        return start(
            tmp_path,
            servers.info,
            cli,
            cli_bins,
            models,
            xmpp_peer,
            xmpp_lines=(f"upload_hosts = {json.dumps(hosts)}",),
            **options,
        )

    return begin


def bot_jid(servers) -> str:
    return servers.info["xmpp"]["accounts"]["bot"]["jid"]


def kept_files(bot) -> list[Path]:
    """Every file in the bot's files folder (`files/` beside its SQLite file)."""
    folder = bot.root / "files"
    return sorted(path for path in folder.rglob("*") if path.is_file()) if folder.exists() else []


async def link(
    peer: Any,
    to: str,
    url: str,
    *,
    room: bool = False,
    caption: str = "",
    reply_to: str | None = None,
) -> str:
    """A message announcing the file at `url` as a client does (the link as the body and
    as Out of Band Data, a caption before it): for links that are not the upload
    service's own."""
    msg = peer.build(to, None, room=room)
    oob.file_message(msg, url)
    if caption:
        msg["body"] = f"{caption}\n{url}"
    if reply_to:
        out.add_reply(msg, reply_to, quote="the message this answers")
    return await peer.transmit(msg)


def from_bot_with_file(message: Any) -> bool:
    """A message of the bot in the room that carries a file link (Out of Band Data)."""
    return message["from"].resource == BOT_NICK and bool(oob.links(message))


async def get(url: str) -> bytes:
    async with aiohttp.ClientSession() as session, session.get(url) as resp:
        assert resp.status == 200, resp.status
        return await resp.read()


# --- 1. a picture sent as a reply to the running builder's message ----------------------


class Release:
    """The builder's first command reads one line from a named pipe in its worktree, so
    the turn runs until the test writes that line: once the bot says it handed the steer
    to the CLI (both CLIs take a steer, and the bot says "took", only at their next model
    request, after the command). The test holds the pipe open for reading and writing
    from the start, so its line waits in the pipe whenever the command opens it; the
    pipe is gone before the agent's commit."""

    def __init__(self, worktree: Path) -> None:
        self.path = worktree / FIFO
        self.fd: int | None = None

    def make(self, seen: Seen) -> Shell:
        os.mkfifo(self.path)
        self.fd = os.open(self.path, os.O_RDWR | os.O_NONBLOCK)
        return Shell(WAIT)

    def release(self) -> None:
        assert self.fd is not None
        os.write(self.fd, b"released\n")

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
        self.path.unlink(missing_ok=True)


@pytest.mark.parametrize("cli", TALKING)
async def test_a_picture_replied_to_the_running_builders_message_reaches_the_model(
    cli: str, servers, begin
) -> None:
    bot, room, agents = await begin(cli)
    worktree = bot.root / "workspaces" / SLUG
    gate = Release(worktree)

    def go_on(seen: Seen) -> WriteFile:
        gate.close()  # the command ended: the pipe goes before anything is committed
        return WriteFile("indent.txt", "\tlike the picture\n")

    agents.script(gate.make, go_on, finish("Indent like the picture"))
    try:
        await room.say(f"/start {SLUG}")
        started = await room.bot_says(rf"▶️ {SLUG}: builder run started")
        await room.bot_says(rf"{SLUG}: builder running.*Latest step: .*{re.escape(WAIT)}")
        # The owner replies to the run's message (the original, as clients do) with a
        # picture uploaded to the real upload service.
        sent, url = await room.peer.upload_and_send(
            room.room,
            PICTURE,
            "screen.png",
            "image/png",
            room=True,
            reply_to=stanza_id(started, room.room),
        )
        assert url.startswith(servers.info["xmpp"]["upload_url"])
        ack = await room.bot_replies_to(sent)
        assert f"↪️ {SLUG}: sent to the builder" in ack["body"], ack["body"]
        handed = await room.bot_says(r"steered by xmpp:owner@\S+: \(see the attached screen")
        assert "took" not in handed["body"]
        assert len(agents.built) == 1  # the command still waits: nothing was asked yet
        gate.release()

        first, after = agents.built[0], await agents.request(2)
        await room.bot_says(r"took xmpp:owner@\S+'s steer")
        # The first request had no picture; the next one (the same turn: the command's
        # result) carries the picture's exact bytes, as each API carries an image.
        assert pictures_in(first.body) == []
        assert pictures_in(after.body) == [PICTURE]
        assert after.session == first.session and "released" in after.tool_results[-1]
        kind = '"input_image"' if cli == "codex" else '"type": "image"'
        assert kind in json.dumps(after.body)
        # The steer names where the picture lies, in the git-ignored folder.
        placed = worktree / run_files.FOLDER / "screen.png"
        assert str(placed) in json.dumps(after.body)
        assert placed.read_bytes() == PICTURE

        await room.bot_says(rf"{SLUG}: review approve")
        assert bot.phase(SLUG) == "ready_for_deployment"
        assert committed(bot) == "indent.txt"
        [row] = bot.query("SELECT state FROM run_talk WHERE kind = 'steer'")
        assert row["state"] == "taken"
        [kept] = bot.query("SELECT name, kind, purpose, talk_id, card_id FROM attachments")
        assert (kept["name"], kept["kind"], kept["purpose"]) == ("screen.png", "image", "steer")
        assert kept["talk_id"] is not None and kept["card_id"] is not None
    finally:
        gate.close()
        await bot.stop()


# --- 2. a .txt sent alone in a direct chat, then /attach, then a run ---------------------

NOTES = "Keep the tabs — ünïcode and all.\nSecond line: 7f3c9e.\n".encode()


@pytest.mark.parametrize("cli", TALKING)
async def test_a_text_file_sent_alone_then_attached_is_in_the_next_runs_worktree_and_prompt(
    cli: str, servers, begin
) -> None:
    bot, room, agents = await begin(cli)
    owner, to = room.peer, bot_jid(servers)
    agents.script(
        Shell(f"cat {run_files.FOLDER}/notes.txt"),
        WriteFile("indent.txt", "\tnoted\n"),
        finish("Indent as the notes say"),
    )
    try:
        await owner.upload_and_send(to, NOTES, "notes.txt", "text/plain")
        loose = await bot_says_directly(owner, to, r"📎 Got notes\.txt")
        assert "text file" in loose["body"] and "/attach <slug>" in loose["body"]
        sent = await owner.say(to, f"/attach {SLUG}")
        attached = await bot_says_directly(owner, to, rf"📎 {SLUG}: attached notes\.txt")
        assert reply_target(attached) == sent, attached

        await owner.say(to, f"/start {SLUG}")
        await room.bot_says(rf"{SLUG}: review approve")

        worktree = bot.root / "workspaces" / SLUG
        placed = worktree / run_files.FOLDER / "notes.txt"
        assert placed.read_bytes() == NOTES
        assert placed.stat().st_mode & 0o777 == 0o600
        first, after = agents.built[0], agents.built[1]
        # The prompt names the file where it lies; the agent read it there (its sandbox
        # shows the folder), and its commit left it out.
        assert f"- {placed}: text, {len(NOTES)} bytes, from xmpp:owner@" in first.prompt
        assert "Second line: 7f3c9e." in after.tool_results[-1]
        assert committed(bot) == "indent.txt"
        [kept] = bot.query("SELECT name, kind, purpose, size FROM attachments")
        assert tuple(kept) == ("notes.txt", "text", "card", len(NOTES))
    finally:
        await bot.stop()


# --- 3. abuse: a stranger's file, a link to another port on loopback ---------------------


class Recorder:
    """An HTTP server on 127.0.0.1 that keeps each request it got: whether the bot fetched
    a link is read here, not guessed. It serves a picture at any path, and at `/big.txt`
    an endless text without a length, noting how much of it went out before the reader
    hung up."""

    #: What `/big.txt` would send in all, were it read to the end.
    BIG = 64 * 1024 * 1024

    def __init__(self) -> None:
        self.got: list[str] = []
        self.streamed = 0
        self.hung_up = asyncio.Event()
        self._runner: web.AppRunner | None = None
        self.port = 0

    async def start(self) -> Recorder:
        app = web.Application()
        app.router.add_get("/big.txt", self._stream)
        app.router.add_route("*", "/{tail:.*}", self._serve)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", 0).start()
        self.port = self._runner.addresses[0][1]
        return self

    async def _serve(self, request: web.Request) -> web.Response:
        self.got.append(f"{request.method} {request.path}")
        return web.Response(body=PICTURE, content_type="image/png")

    async def _stream(self, request: web.Request) -> web.StreamResponse:
        self.got.append(f"{request.method} {request.path}")
        response = web.StreamResponse(headers={"Content-Type": "text/plain"})
        await response.prepare(request)
        chunk = b"a line of a log nobody asked for\n" * 2048
        try:
            while self.streamed < self.BIG:
                await response.write(chunk)
                self.streamed += len(chunk)
        except (ConnectionError, RuntimeError):
            self.hung_up.set()
        return response

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()


@pytest.fixture
async def recorders() -> AsyncIterator[tuple[Recorder, Recorder]]:
    made = (await Recorder().start(), await Recorder().start())
    yield made
    for recorder in made:
        await recorder.stop()


async def test_a_strangers_file_is_never_fetched_and_a_link_to_loopback_is_refused(
    servers, xmpp_peer, begin, recorders
) -> None:
    listed, elsewhere = recorders
    bot, room, _ = await begin("codex", extra_hosts=(f"127.0.0.1:{listed.port}",))
    to = bot_jid(servers)
    stranger = await xmpp_peer("stranger")
    await stranger.join(room.room, "stranger")
    try:
        # A stranger's file alone in a direct chat (uploaded to the real service), then
        # a link to a host the bot does fetch from, with a caption naming the card.
        await stranger.upload_and_send(to, PICTURE, "mine.png", "image/png")
        told = await bot_says_directly(stranger, to, r"You may not use this bot")
        assert not oob.links(told)
        await link(
            stranger,
            room.room,
            f"http://127.0.0.1:{listed.port}/theirs.png",
            room=True,
            caption=f"/attach {SLUG}",
        )
        await refused_twice(bot, "stranger@localhost")

        # An owner's link to another port on loopback: refused with the reason.
        url = f"http://127.0.0.1:{elsewhere.port}/x.png"
        sent = await link(room.peer, room.room, url, room=True, caption=f"/attach {SLUG}")
        refused = await room.bot_replies_to(sent)
        assert "📎 x.png was not taken: " in refused["body"], refused["body"]
        assert "127.0.0.1, a bare IP address" in refused["body"], refused["body"]

        # Nothing was fetched, nothing kept, nothing attached.
        assert listed.got == [] and elsewhere.got == []
        assert kept_files(bot) == []
        assert bot.query("SELECT id FROM attachments") == []

        # A link to the listed host, from the owner: fetched and attached, so the
        # stranger's would have been fetched too had the bot tried.
        url = f"http://127.0.0.1:{listed.port}/ours.png"
        sent = await link(room.peer, room.room, url, room=True, caption=f"/attach {SLUG}")
        attached = await room.bot_replies_to(sent)
        assert f"📎 {SLUG}: attached ours.png" in attached["body"], attached["body"]
        assert listed.got == ["GET /ours.png"] and elsewhere.got == []
        [kept] = bot.query("SELECT name, actor FROM attachments")
        assert kept["name"] == "ours.png" and kept["actor"].startswith("xmpp:owner@")
        assert [path.read_bytes() for path in kept_files(bot)] == [PICTURE]
    finally:
        await bot.stop()


async def refused_twice(bot: Any, who: str) -> None:
    """Both of the stranger's messages reached the intake and were refused (it says so
    in its log each time; the chat is told once an hour)."""
    pattern = rf"refused IncomingMessage from \S*{re.escape(who)}"
    await bot.logged(pattern, times=2)


# --- 4. a long /diff also comes as a .patch file; /log --file -----------------------------


async def test_a_long_diff_comes_with_the_cards_exact_patch_file_and_the_log_as_a_file(
    begin,
) -> None:
    cli = "claude"
    bot, room, agents = await begin(cli)
    long = "".join(f"\tline {number} of the indented file\n" for number in range(1, 121))
    agents.script(WriteFile("indent.txt", long), finish("Indent a long file"))
    try:
        await room.say(f"/start {SLUG}")
        await room.bot_says(rf"{SLUG}: review approve")
        commit = bot.card(SLUG)["commit_hash"]

        asked = await room.say(f"/diff {SLUG}")
        summary = await room.bot_replies_to(asked)
        assert f"{SLUG}: commit {commit[:12]}, 1 file, +120 -0" in summary["body"]
        caption = await room.bot_says(rf"📎 {SLUG}: the whole change as one file")
        got = await room.peer.expect(from_bot_with_file, within=30)
        (url,) = oob.links(got)
        assert got["body"] == url and url.endswith(f"/{SLUG}-{commit[:12]}.patch")
        assert reply_target(got) == asked and reply_target(caption) == asked
        # Beside it, the per-file posts: the file's post shows what fits, the patch all.
        post = await room.bot_says(rf"📄 1/1 indent\.txt \+120 -0 · {SLUG} {commit[:12]}")
        assert "  59 + \tline 59 of the indented file\n```" in post["body"], post["body"]
        assert "61 more lines" in post["body"]

        patch = await get(url)
        assert patch == git_patch(bot.root / "repo", commit)
        assert b"+\tline 120 of the indented file\n" in patch

        # The card's whole log, on request, as a file too.
        asked = await room.say(f"/log {SLUG} --file")
        caption = await room.bot_says(rf"📎 {SLUG}: its log as a file \(\d+ events, 3 runs\)")
        got = await room.peer.expect(from_bot_with_file, within=30)
        (url,) = oob.links(got)
        assert url.endswith(f"/{SLUG}-log.txt") and reply_target(got) == asked
        assert reply_target(caption) == asked
        log = (await get(url)).decode()
        assert log.startswith(f"# {SLUG}: ") and f"\ncommit: {commit}\n" in log
        runs = [
            line.split(" | ")[1]
            for line in log.split("## Runs (3, newest first)\n")[1].splitlines()
        ]
        assert runs == ["reviewer", "builder", "operator"], log
    finally:
        await bot.stop()


def git_patch(repo: Path, commit: str) -> bytes:
    """The card's change as git writes it: its commit against its parent."""
    return subprocess.run(
        ["git", "-C", str(repo), "diff", "--no-color", "-M", f"{commit}^", commit, "--"],
        check=True,
        capture_output=True,
    ).stdout


# --- 5. the owner's bad files: too large, a bomb, not a kind the bot takes, a full store ---

MB = 1024 * 1024


async def test_an_owners_bad_files_are_refused_with_the_reason_and_nothing_is_kept(
    begin, recorders
) -> None:
    listed, _ = recorders
    bot, room, _ = await begin(
        "codex",
        extra_hosts=(f"127.0.0.1:{listed.port}",),
        extra="\n[files]\nmax_size_mb = 1\nquota_mb = 1\n",
    )
    caption = f"/attach {SLUG}"

    async def refused(data: bytes, name: str, kind: str) -> str:
        sent, _ = await room.peer.upload_and_send(
            room.room, data, name, kind, room=True, caption=caption
        )
        said = (await room.bot_replies_to(sent))["body"]
        assert f"📎 {name} was not taken: " in said, said
        return said

    try:
        # Announced larger than the limit by the real upload service: refused unread.
        said = await refused(b"x" * (MB + 1), "huge.log", "text/plain")
        assert f"larger than the limit of {MB} bytes ({MB + 1} bytes announced" in said
        # A length nobody announced: the download stops at the limit, the rest unread.
        url = f"http://127.0.0.1:{listed.port}/big.txt"
        sent = await link(room.peer, room.room, url, room=True, caption=caption)
        said = (await room.bot_replies_to(sent))["body"]
        assert f"📎 big.txt was not taken: the file is larger than the limit of {MB}" in said
        await asyncio.wait_for(listed.hung_up.wait(), 10)
        assert listed.streamed < Recorder.BIG // 4, listed.streamed
        # A picture claiming 10 billion pixels: refused from its header, never decoded.
        said = await refused(png_bomb(), "bomb.png", "image/png")
        assert "the picture claims 10,000,000,000 pixels" in said and "max_pixels" in said
        # A program sent as a picture: the bytes say what it is, not the sender.
        said = await refused(b"\x7fELF\x02\x01\x01" + bytes(200), "cat.png", "image/png")
        assert "took it for a Linux executable; the bot takes pictures" in said, said
        assert kept_files(bot) == [] and bot.query("SELECT id FROM attachments") == []

        # The store holds 1 MB: a second file that would pass it is refused with the way
        # forward (the card is not finished, so nothing of it may be dropped).
        first = b"first notes\n" * (600 * 1024 // 12)
        sent, _ = await room.peer.upload_and_send(
            room.room, first, "first.txt", "text/plain", room=True, caption=caption
        )
        attached = (await room.bot_replies_to(sent))["body"]
        assert f"📎 {SLUG}: attached first.txt" in attached, attached
        said = await refused(b"second notes\n" * (600 * 1024 // 13), "second.txt", "text/plain")
        assert "the bot's file store is full" in said and "quota_mb" in said, said
        assert [path.read_bytes() for path in kept_files(bot)] == [first]
        [kept] = bot.query("SELECT name FROM attachments")
        assert kept["name"] == "first.txt"
    finally:
        await bot.stop()
