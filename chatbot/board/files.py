"""Files a result writes into the repository, staged so they land with the database or not at all.

Each file is first written under a temporary name beside its target. `commit()`
renames them into place (rename is atomic within a folder); `discard()` removes
whatever was staged or already renamed. The board service renames inside its
transaction, just before COMMIT, and discards when anything fails.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path


class FileExistsRefusal(Exception):
    def __init__(self, path: Path):
        super().__init__(f"{path} exists already; nothing was written")
        self.path = path


class StagedFiles:
    def __init__(self, root: Path):
        self.root = root
        self._staged: list[tuple[Path, Path, bool]] = []  # (temp, target, must_be_new)
        self._placed: list[tuple[Path, bytes | None]] = []  # (target, previous content)

    def add(self, relative: str, text: str, *, must_be_new: bool = False) -> Path:
        target = (self.root / relative).resolve()
        if not target.is_relative_to(self.root.resolve()):
            raise ValueError(f"{relative} is outside the repository")
        if must_be_new and target.exists():
            raise FileExistsRefusal(target)
        target.parent.mkdir(parents=True, exist_ok=True)
        temp = target.with_name(f".{target.name}.{uuid.uuid4().hex[:8]}.tmp")
        with open(temp, "w", encoding="utf-8") as handle:
            handle.write(text if text.endswith("\n") else text + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        self._staged.append((temp, target, must_be_new))
        return target

    @property
    def targets(self) -> list[Path]:
        return [target for _, target, _ in self._staged]

    def commit(self) -> None:
        """Move every staged file into place; on any refusal, undo what was moved."""
        try:
            for temp, target, must_be_new in self._staged:
                if must_be_new and target.exists():
                    raise FileExistsRefusal(target)
                previous = target.read_bytes() if target.exists() else None
                os.replace(temp, target)
                self._placed.append((target, previous))
        except BaseException:
            self.discard()
            raise

    def discard(self) -> None:
        for target, previous in reversed(self._placed):
            if previous is None:
                target.unlink(missing_ok=True)
            else:
                target.write_bytes(previous)
        self._placed.clear()
        for temp, _, _ in self._staged:
            temp.unlink(missing_ok=True)
        self._staged.clear()
