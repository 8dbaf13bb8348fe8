"""The README's "try it" session: the embedded console demo and the scripted CLIs.

Typed exactly as a new user would: /draft, answer the question, /start the new
card, and watch it reach ready_for_deployment.
"""

from __future__ import annotations

from pathlib import Path

from chatbot.app import demo
from chatbot.store import telemetry
from tests.demo.serving import said, serving

ROOT = Path(__file__).resolve().parents[2]


def demo_config(tmp_path: Path, web: str = "off"):
    """The embedded console demo, its state in a temporary folder (its web board only
    where a test asks: a fixed port would be shared by every test)."""
    return demo.config(tmp_path, web=web)


async def test_console_demo_from_draft_to_ready_for_deployment(tmp_path: Path) -> None:
    config = demo_config(tmp_path)
    assert config.bot.repo == tmp_path / "demo-repo"
    async with serving(config) as (console, bot):
        await console.push("/help")
        await said(console, r"/start")
        # The card is made of what the owner typed, not of a fixed script.
        await console.push("/draft add a dark mode to the settings page")
        question = await said(console, r"Who is this for, and how will you know it works\?")
        assert "2️⃣ the whole team" in question.text
        await console.push(f"+{question.number} 2️⃣")
        slug = "add-a-dark-mode-to-the-settings-page"
        await said(console, rf"{slug}: new planned card")
        intent = (tmp_path / "demo-repo" / "docs" / "intent" / f"{slug}.md").read_text()
        assert intent.startswith("# add a dark mode to the settings page\n")
        assert "for the whole team" in intent
        await console.push(f"/start {slug}")
        await said(console, r"review approve")
        card = await bot.board.reads.card(slug)
        assert card.phase.value == "ready_for_deployment"
        assert card.data.answers[0]["answer"] == "the whole team"
        runs = await telemetry.for_card(bot.store.reader, card.id)
        assert sorted(r.role for r in runs) == [
            "builder",
            "operator",
            "planner",
            "planner",
            "reviewer",
        ]
        # A second draft is a new card with a number never given before: draft-1 became
        # the card above, and stays the name of that first draft.
        await console.push("/draft greet people in the demo service")
        again = await said(console, r"Who is this for")
        assert "draft-2" in again.text
        await console.push(f"+{again.number} 1️⃣")
        await said(console, r"greet-people-in-the-demo-service: new planned card")
        assert (
            await bot.board.reads.card("greet-people-in-the-demo-service")
        ).phase.value == "planned"
