"""The README's Layout table is the map of the code: it must stay true.

Every module of chatbot/ and runners/ is named in the row of its room, and each
row's "may import" column is exactly the rule tests/contracts/test_imports.py holds
the code to (RULES). A module added, moved or allowed a new import without the
table following fails here.
"""

from __future__ import annotations

import re

from tests.contracts.test_imports import PACKAGES, ROOT, RULES, module_name, room_of

README = ROOT / "README.md"
WORDS = {"nothing": set(), "nothing of the bot": set(), "everything": {"chatbot", "runners"}}


def layout_rows() -> dict[str, tuple[set[str], str]]:
    """room -> (the rooms its "may import" column names, the row's whole text)."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Layout") : text.index("## Benchmarks")]
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


def test_each_rooms_may_import_column_is_the_rule() -> None:
    rows = layout_rows()
    for room, allowed in RULES.items():
        if room in ("chatbot", "chatbot.__main__"):
            continue  # the package's own __init__ and `python -m chatbot`
        assert room in rows, f"README's Layout has no row for {room}"
        assert rows[room][0] == allowed, (room, rows[room][0], allowed)
    assert set(rows) <= set(RULES), set(rows) - set(RULES)


def test_every_module_is_named_in_the_row_of_its_room() -> None:
    rows = layout_rows()
    section = README.read_text(encoding="utf-8")
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
