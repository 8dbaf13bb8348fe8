"""Cards from files: docs/intent/*.md and docs/research-intent/*.md in the target repo.

Re-importing is idempotent: a known card keeps its phase (the board, not the file,
says where work stands); only its title and path follow the file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from chatbot.domain.phases import Kind, Phase
from chatbot.store import Db
from chatbot.store import cards as card_store
from runners.profiles import is_valid_slug

SOURCES: tuple[tuple[str, Kind], ...] = (
    ("docs/intent", Kind.INTENT),
    ("docs/research-intent", Kind.RESEARCH),
)
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$")
MAX_TITLE = 200


@dataclass(frozen=True)
class IntentFile:
    slug: str
    kind: Kind
    title: str
    path: str  # relative to the repository


@dataclass
class ImportReport:
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: int = 0
    rejected: list[tuple[str, str]] = field(default_factory=list)  # (path, why)


def title_of(text: str, fallback: str) -> str:
    for line in text.splitlines():
        match = _HEADING.match(line)
        if match:
            return match.group(1).strip()[:MAX_TITLE]
    return fallback


def scan(repo: Path) -> tuple[list[IntentFile], list[tuple[str, str]]]:
    """Read the intent folders; a file that cannot become a card is reported, never dropped."""
    found: dict[str, IntentFile] = {}
    rejected: list[tuple[str, str]] = []
    for folder, kind in SOURCES:
        directory = repo / folder
        if not directory.is_dir():
            continue
        for path in sorted(directory.glob("*.md")):
            relative = f"{folder}/{path.name}"
            slug = path.stem
            if not is_valid_slug(slug):
                rejected.append(
                    (
                        relative,
                        f"'{path.name}' is not a valid card name: use lowercase letters, "
                        "digits and '-', starting with a letter or digit, at most 61 characters",
                    )
                )
                continue
            if slug in found:
                rejected.append(
                    (
                        relative,
                        f"'{slug}' exists already as {found[slug].path}; names must be unique",
                    )
                )
                continue
            if path.is_symlink():
                # A link (an agent's commit, merged) could name any file of the host.
                rejected.append((relative, "is a symbolic link; an intent must be a file"))
                continue
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as error:
                rejected.append((relative, f"cannot be read: {error}"))
                continue
            found[slug] = IntentFile(slug, kind, title_of(text, slug), relative)
    return list(found.values()), rejected


async def import_files(db: Db, files: list[IntentFile], report: ImportReport) -> None:
    for item in files:
        existing = await card_store.get(db, item.slug)
        if existing is None:
            await card_store.create(
                db,
                item.slug,
                item.kind,
                Phase.PLANNED,
                actor="system",
                action="import",
                reason=f"imported from {item.path}",
                title=item.title,
                source_path=item.path,
            )
            report.created.append(item.slug)
        elif existing.kind is not item.kind and existing.kind is not Kind.DRAFT:
            report.rejected.append(
                (item.path, f"card '{item.slug}' exists already as a {existing.kind.value} card")
            )
        elif existing.title != item.title or existing.source_path != item.path:
            await card_store.update(db, item.slug, title=item.title, source_path=item.path)
            report.updated.append(item.slug)
        else:
            report.unchanged += 1
