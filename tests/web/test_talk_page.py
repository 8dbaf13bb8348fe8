"""The card page's part about its agent (issue 25): the full text of what it asked,
escaped, which chat shortens; and the command that continues its session."""

from __future__ import annotations

from pathlib import Path

from chatbot.domain.phases import Phase
from chatbot.store import cards as card_store
from chatbot.store import jobs as job_store
from runners.runtimes import RUNTIMES
from tests.records import run_record
from tests.web.conftest import open_site
from tests.web.test_http import fetch

LONG = "curl -X POST https://example.org/" + "a" * 900 + " <script>window.pwned=1</script>"


class Section:
    """A `[runtimes.claude]` section as the page needs it."""

    binary = "claude"
    base_url = "http://127.0.0.1:9/"
    api_key_file = Path("/etc/bot/anthropic.key")


async def test_the_card_page_shows_what_the_agent_asked_whole_and_its_session(
    tmp_path: Path,
) -> None:
    workspaces = tmp_path / "ws"
    site = await open_site(tmp_path, workspaces=workspaces, runtimes={"claude": Section()})
    try:
        async with site.store.transaction() as db:
            card = await card_store.create(
                db, "talky", card_store.Kind.INTENT, Phase.BUILDING, actor="t", title="Talky"
            )
            job, _ = await job_store.enqueue(db, kind="builder", lane="light", card_id=card.id)
        asked = await site.board.talk.ask_approval(
            job, card, tool="Bash", command=LONG, cwd="/w/talky"
        )
        await site.board.talk.decide_approval(
            asked.id, False, actor="xmpp:o@x", reason="no network"
        )
        await site.board.queue.record_run(
            run_record(
                runtime="claude",
                configured_model="",
                session_id="3f0c2a9e-1111-4222-8333-944445555666",
                job_id=job.id,
                card_id=card.id,
            )
        )
        status, _, body = await fetch(site, "card/talky", headers=site.headers())
        assert status == 200
        assert "a" * 900 in body  # the whole command, not the chat's 400 characters
        assert "<script>window.pwned=1</script>" not in body
        assert "&lt;script&gt;window.pwned=1&lt;/script&gt;" in body
        assert "denied" in body and "no network" in body and "in /w/talky" in body
        assert "3f0c2a9e-1111-4222-8333-944445555666" in body
        assert f"Worktree: {workspaces.absolute() / 'talky'}" in body
        assert RUNTIMES["claude"].hand_over is not None
        assert "--resume 3f0c2a9e-1111-4222-8333-944445555666" in body
        assert "/etc/bot/anthropic.key" in body  # the key file by name, never a key
    finally:
        await site.web.stop()
        await site.store.close()
