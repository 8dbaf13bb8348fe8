"""The Layout tables are the map of the code: they must stay true.

The README's Layout names each room and what it may import; the architecture page
(docs/architecture.md) names every module of chatbot/ and runners/ in the row of its
room. Each row's "may import" column, in both, is exactly the rule
tests/contracts/test_imports.py holds the code to (RULES). A module added, moved or
allowed a new import without the tables following fails here.
"""

from __future__ import annotations

import importlib
import re

import pytest

from tests.contracts.test_imports import PACKAGES, ROOT, RULES, module_name, room_of

README = ROOT / "README.md"
ARCHITECTURE = ROOT / "docs" / "architecture.md"
WORDS = {"nothing": set(), "nothing of the bot": set(), "everything": {"chatbot", "runners"}}


def layout_section(page=ARCHITECTURE) -> str:
    text = page.read_text(encoding="utf-8")
    start = text.index("## Layout")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def layout_rows(page=ARCHITECTURE) -> dict[str, tuple[set[str], str]]:
    """room -> (the rooms its "may import" column names, the row's whole text)."""
    section = layout_section(page)
    rows: dict[str, tuple[set[str], str]] = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) != 3 or not cells[0].startswith("`"):
            continue
        first = re.findall(r"`([^`]+)`", cells[0])[0]
        if not first.startswith(("chatbot", "runners")):
            continue  # roles/, config/, tests/, bench/: not code rooms
        rows[_room(first)] = (_allowed(cells[1]), line)
    return rows


def _room(path: str) -> str:
    return path.rstrip("/").removesuffix(".py").replace("/", ".")


def _allowed(cell: str) -> set[str]:
    plain = re.sub(r"\s*\(.*\)", "", cell).strip()
    if plain in WORDS:
        return set(WORDS[plain])
    return {_room(path) for path in re.findall(r"`([^`]+)`", cell)}


@pytest.mark.parametrize("page", [README, ARCHITECTURE], ids=["README", "architecture"])
def test_each_rooms_may_import_column_is_the_rule(page) -> None:
    rows = layout_rows(page)
    for room, allowed in RULES.items():
        if room in ("chatbot", "chatbot.__main__"):
            continue  # the package's own __init__ and `python -m chatbot`
        assert room in rows, f"{page.name}'s Layout has no row for {room}"
        assert rows[room][0] == allowed, (room, rows[room][0], allowed)
    assert set(rows) <= set(RULES), set(rows) - set(RULES)


def test_every_module_is_named_in_the_row_of_its_room() -> None:
    rows = layout_rows()
    section = layout_section()
    missing = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if path.name == "__init__.py" or "seed" in path.parts:
                continue
            module = module_name(path)
            room = room_of(module)
            row = rows[room][1] if room in rows else section
            rel = path.relative_to(ROOT).as_posix()
            names = (f"`{path.stem}`", f"`{path.name}`", f"`{rel}`")
            if module == room:
                continue  # a one-module room: its row is its name
            if not any(name in row for name in names):
                missing.append(f"{rel} (room {room})")
    assert missing == []


def test_the_check_sees_a_module_left_out() -> None:
    rows = layout_rows()
    assert "`sqlite_threads.py`" in rows["chatbot.store"][1]
    assert _allowed("nothing of the bot") == set()
    assert _allowed("`chatbot/board/`, `runners`") == {"chatbot.board", "runners"}
    assert _allowed("`runners` (its records)") == {"runners"}


def seam_rows(text: str) -> list[tuple[str, list[str], str]]:
    """The README's table of doors: (door, the type names it gives, the module's file)."""
    start = text.index("| door | its type | in |")
    rows = []
    for line in text[start:].splitlines()[2:]:
        if not line.startswith("|"):
            break
        door, types, where = (cell.strip() for cell in line.strip().strip("|").split("|"))
        names = [name for name in re.findall(r"`([^`]+)`", types) if name.isidentifier()]
        rows.append((door, names, re.findall(r"`([^`]+)`", where)[0]))
    return rows


def missing_seams(text: str) -> list[str]:
    missing = []
    for door, names, path in seam_rows(text):
        module = importlib.import_module(path.removesuffix(".py").replace("/", "."))
        missing += [
            f"{door}: {name} is not in {path}" for name in names if name not in vars(module)
        ]
    return missing


def test_each_door_of_the_readme_is_the_type_it_names() -> None:
    rows = seam_rows(README.read_text(encoding="utf-8"))
    assert len(rows) >= 9
    assert all(names for _, names, _ in rows)
    assert missing_seams(README.read_text(encoding="utf-8")) == []


def test_the_check_sees_a_door_whose_type_moved() -> None:
    planted = (
        "| door | its type | in |\n|---|---|---|\n"
        "| what the bot sends | `Outgoing` | `chatbot/board/ports.py` |\n"
    )
    assert missing_seams(planted) == [
        "what the bot sends: Outgoing is not in chatbot/board/ports.py"
    ]
