from __future__ import annotations

from pathlib import Path

from chatbot.board import BoardService
from chatbot.domain.phases import Kind, Phase
from chatbot.domain.transitions import Action
from chatbot.store import cards as card_store


def _write(repo: Path, relative: str, text: str) -> None:
    path = repo / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


async def test_files_become_planned_cards_with_their_heading_as_title(
    board: BoardService, repo: Path
) -> None:
    _write(repo, "docs/intent/add-login.md", "Intro line\n\n## Add a login page\n\nbody")
    _write(repo, "docs/research-intent/pick-db.md", "# Which database?\n")
    _write(repo, "docs/intent/no-heading.md", "just text\n")
    report = await board.import_cards()
    assert sorted(report.created) == ["add-login", "no-heading", "pick-db"]
    login = await board.reads.card("add-login")
    assert (login.kind, login.phase, login.title) == (
        Kind.INTENT,
        Phase.PLANNED,
        "Add a login page",
    )
    assert login.source_path == "docs/intent/add-login.md"
    research = await board.reads.card("pick-db")
    assert (research.kind, research.title) == (Kind.RESEARCH, "Which database?")
    assert (await board.reads.card("no-heading")).title == "no-heading"


async def test_a_file_name_that_is_not_a_slug_is_reported_not_imported(
    board: BoardService, repo: Path
) -> None:
    _write(repo, "docs/intent/Bad Name.md", "# x\n")
    _write(repo, "docs/intent/-leading-dash.md", "# x\n")
    _write(repo, "docs/intent/" + "a" * 62 + ".md", "# x\n")
    _write(repo, "docs/intent/good.md", "# x\n")
    _write(repo, "docs/research-intent/good.md", "# same name\n")
    report = await board.import_cards()
    assert report.created == ["good"]
    rejected = dict(report.rejected)
    assert "not a valid card name" in rejected["docs/intent/Bad Name.md"]
    assert "docs/intent/-leading-dash.md" in rejected
    assert f"docs/intent/{'a' * 62}.md" in rejected
    assert "exists already" in rejected["docs/research-intent/good.md"]
    assert await board.reads.slugs() == ["good"]


async def test_reimport_is_idempotent_and_keeps_the_phase(board: BoardService, repo: Path) -> None:
    _write(repo, "docs/intent/c.md", "# First title\n")
    await board.import_cards()
    await board.act("c", Action.START, actor="owner@example.org")
    again = await board.import_cards()
    assert again.created == [] and again.updated == [] and again.unchanged == 1
    _write(repo, "docs/intent/c.md", "# Second title\n")
    third = await board.import_cards()
    assert third.updated == ["c"]
    card = await board.reads.card("c")
    assert card.phase is Phase.OPERATOR_RUNNING and card.title == "Second title"
    history = await card_store.events(board.store.reader, card.id)
    assert [e.action for e in history] == ["import", "start"]


async def test_missing_intent_folders_import_nothing(board: BoardService, tmp_path: Path) -> None:
    empty = BoardService(board.store, tmp_path / "nowhere")
    report = await empty.import_cards()
    assert report.created == [] and report.rejected == []


async def test_an_intent_that_is_a_link_is_refused_never_read(
    board: BoardService, repo: Path, tmp_path: Path
) -> None:
    # An agent's merged commit could make an intent a link to a secret of the host
    # (issue 32): its text would reach a title, a prompt and a provider.
    secret = tmp_path / "xmpp-password"
    secret.write_text("# hunter2-secret\n")
    (repo / "docs" / "intent").mkdir(parents=True, exist_ok=True)
    (repo / "docs" / "intent" / "leak.md").symlink_to(secret)
    report = await board.import_cards()
    assert "leak" not in report.created
    assert "symbolic link" in dict(report.rejected)["docs/intent/leak.md"]
