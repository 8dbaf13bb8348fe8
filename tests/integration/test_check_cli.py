"""`chatbot check` against the real servers: per room, can it join and post, are JIDs real."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.inprocess import in_thread

from .bot_process import ROOT, bot_config


async def check(config: Path, *options: str) -> subprocess.CompletedProcess[str]:
    return await in_thread("check", *options, "--config", str(config), cwd=ROOT)


async def test_check_logs_in_and_reports_each_room(tmp_path: Path, servers) -> None:
    (tmp_path / "repo").mkdir()
    x = servers.info["xmpp"]
    config = bot_config(tmp_path, servers.info, xmpp=True, matrix=True)
    hidden = x["rooms"]["hidden"]
    text = config.read_text().replace(
        f'rooms = ["{x["rooms"]["public"]}"]', f'rooms = ["{x["rooms"]["public"]}", "{hidden}"]'
    )
    config.write_text(text)
    result = await check(config)
    out = result.stdout
    assert "xmpp bot@localhost: logged in" in out, result.stderr
    assert f"room {x['rooms']['public']}: joined yes, can post yes, sees real JIDs yes" in out
    assert f"room {hidden}:" in out and "sees real JIDs NO" in out
    assert "matrix @bot:localhost: logged in" in out
    # The password never shows, only the file that holds it.
    assert x["accounts"]["bot"]["password"] not in out + result.stderr
    assert "secrets/xmpp" in out


async def test_check_names_a_wrong_password(tmp_path: Path, servers) -> None:
    (tmp_path / "repo").mkdir()
    config = bot_config(tmp_path, servers.info, xmpp=True, matrix=False)
    (tmp_path / "secrets" / "xmpp").write_text("not-the-password")
    result = await check(config)
    assert result.returncode == 1
    assert "NOT logged in" in result.stdout
    assert json.dumps("not-the-password") not in result.stdout


async def test_verbose_logs_never_show_the_chat_password(tmp_path: Path, servers) -> None:
    (tmp_path / "repo").mkdir()
    config = bot_config(tmp_path, servers.info, xmpp=True, matrix=True)
    result = await check(config, "-v")
    assert "logged in" in result.stdout
    output = result.stdout + result.stderr
    for account in (
        servers.info["xmpp"]["accounts"]["bot"],
        servers.info["matrix"]["accounts"]["bot"],
    ):
        password = account["password"]
        assert password not in output
        import base64

        assert base64.b64encode(password.encode()).decode()[:12] not in output


async def test_check_names_a_server_without_tls_instead_of_the_password(
    tmp_path: Path, servers
) -> None:
    # The test Prosody offers no TLS; with the default `tls = "starttls"` the password
    # is never sent. Blaming the password sent people hunting the wrong problem.
    (tmp_path / "repo").mkdir()
    config = bot_config(tmp_path, servers.info, xmpp=True, matrix=False)
    config.write_text(config.read_text().replace('tls = "none"\n', ""))
    result = await check(config)
    assert result.returncode == 1
    assert "offered no TLS, so the password was not sent" in result.stdout, result.stdout
    assert "check the password" not in result.stdout
