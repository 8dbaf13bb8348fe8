"""Web sessions end when what signed them in no longer holds, as the bot starts its board
(app/serve.py start_web, the real store and HTTP): a new token file, an owner removed
from the configuration. The owners who remain keep theirs."""

from __future__ import annotations

import secrets
from pathlib import Path

import aiohttp

from chatbot.app.serve import start_web
from chatbot.app.startup import running_bot
from chatbot.config import Config, parse_config
from tests.pipeline.harness import BIN, CONFIG, make_repo
from tests.realservers.proc import free_port

STAYS = "xmpp:owner@example.org"
LEAVES = "matrix:@leaves:example.org"


def configured(root: Path, owners: list[str], port: int) -> Config:
    text = CONFIG.format(bin=BIN).replace(
        'owners = ["owner@example.org"]', f"owners = {owners!r}".replace("'", '"')
    )
    text += f'[web]\nlisten = "127.0.0.1:{port}"\ntoken_file = "web-token"\n'
    path = root / "bot.toml"
    path.write_text(text)
    return parse_config(text, path)


async def status(url: str, cookie: str) -> int:
    async with aiohttp.ClientSession() as http:
        headers = {"Cookie": f"board_owner={cookie}"}
        async with http.get(url, headers=headers, allow_redirects=False) as response:
            return response.status


async def started(config: Config, signing_in: list[str] | None = None) -> dict[str, str]:
    """Start the bot's board once; sign `signing_in` in; each cookie's status as it ran."""
    cookies: dict[str, str] = {}
    async with running_bot(config, worker=False) as bot:
        web = await start_web(bot, {})
        assert web is not None
        try:
            sessions = bot.board.web_sessions
            for identity in signing_in or []:
                link = await sessions.issue(identity)
                cookies[identity] = (await sessions.sign_in(link.token, "Firefox/121.0")).cookie
            seen = {who: str(await status(web.url, cookie)) for who, cookie in cookies.items()}
        finally:
            await web.stop()
    return cookies | {f"{who}:status": code for who, code in seen.items()}


async def test_a_new_token_file_ends_every_owners_session_at_the_next_start(
    tmp_path: Path,
) -> None:
    # Issue 33 point 3: after the token file changed, an owner's session still got 200
    # and its POSTs passed; a live session skipped the token check.
    make_repo(tmp_path, {"alpha": "# Alpha\n"})
    (tmp_path / "web-token").write_text(secrets.token_urlsafe(24) + "\n")
    config = configured(tmp_path, ["owner@example.org", "@leaves:example.org"], free_port())
    first = await started(config, [STAYS, LEAVES])
    assert first[f"{STAYS}:status"] == first[f"{LEAVES}:status"] == "200"

    # The same token: both owners' sessions live on over a restart.
    async with running_bot(config, worker=False) as bot:
        web = await start_web(bot, {})
        assert web is not None
        try:
            assert await status(web.url, first[STAYS]) == 200
            assert await status(web.url, first[LEAVES]) == 200
        finally:
            await web.stop()

    (tmp_path / "web-token").write_text(secrets.token_urlsafe(24) + "\n")
    config = configured(tmp_path, ["owner@example.org", "@leaves:example.org"], free_port())
    async with running_bot(config, worker=False) as bot:
        web = await start_web(bot, {})
        assert web is not None
        try:
            assert await status(web.url, first[STAYS]) == 401
            assert await status(web.url, first[LEAVES]) == 401
            assert await bot.board.web_sessions.everyone() == []
        finally:
            await web.stop()


async def test_a_removed_owner_is_signed_out_and_the_others_stay(tmp_path: Path) -> None:
    # Issue 33 point 2, through the start itself: the owner list in the config is bare
    # ids, the sessions name transport-qualified identities; only the removed one ends.
    make_repo(tmp_path, {"alpha": "# Alpha\n"})
    (tmp_path / "web-token").write_text(secrets.token_urlsafe(24) + "\n")
    config = configured(tmp_path, ["owner@example.org", "@leaves:example.org"], free_port())
    first = await started(config, [STAYS, LEAVES])
    config = configured(tmp_path, ["owner@example.org"], free_port())
    async with running_bot(config, worker=False) as bot:
        web = await start_web(bot, {})
        assert web is not None
        try:
            assert await status(web.url, first[STAYS]) == 200
            assert await status(web.url, first[LEAVES]) == 401
        finally:
            await web.stop()
