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


def demo_config(tmp_path: Path):
    """The embedded console demo, its state in a temporary folder."""
    return demo.config(tmp_path)


async def test_console_demo_from_draft_to_ready_for_deployment(tmp_path: Path) -> None:
    config = demo_config(tmp_path)
    assert config.bot.repo == tmp_path / "demo-repo"
    async with serving(config) as (console, bot):
        await console.push("/help")
        await said(console, r"/start")
        await console.push("/draft greet people in the demo service")
        question = await said(console, r"Which language should the greeting use\?")
        assert "2️⃣ German" in question.text
        await console.push(f"+{question.number} 2️⃣")
        await said(console, r"greeting-demo")
        await console.push("/start greeting-demo")
        await said(console, r"review approve")
        await console.push("/status greeting-demo")
        status = await said(console, r"greeting-demo")
        assert "ready" in status.text
        card = await bot.board.card("greeting-demo")
        assert card.phase.value == "ready_for_deployment"
        assert card.data["answers"][0]["answer"] == "German"
        runs = await telemetry.for_card(bot.store.reader, card.id)
        assert sorted(r.role for r in runs) == [
            "builder",
            "operator",
            "planner",
            "planner",
            "reviewer",
        ]
        # The demo repo was created from the seed, and the builder's commit is on its branch.
        assert (tmp_path / "demo-repo" / "docs" / "intent" / "greeting-demo.md").exists()
        # A second draft is a new card, not "a card 'greeting-demo' exists already".
        await console.push("/draft greet people once more")
        again = await said(console, r"Which language should the greeting use\?")
        await console.push(f"+{again.number} 1️⃣")
        await said(console, r"greeting-demo-2: new planned card")
        assert (await bot.board.card("greeting-demo-2")).phase.value == "planned"
