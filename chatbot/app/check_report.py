"""What `chatbot check` found, printed most wanted first (issue 34).

A new user runs check to learn what is left to do: the placeholders to fill in and
what is broken come first, then a line per thing that is fine. The resolved
configuration is long and only wanted when a value is in doubt: `--show-config`.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Report:
    to_fill_in: list[str] = field(default_factory=list)
    # What fails the check; each entry may span lines (a block that failed as a whole).
    problems: list[str] = field(default_factory=list)
    details: list[str] = field(default_factory=list)

    def add(self, text: str, ok: bool = True) -> None:
        (self.details if ok else self.problems).append(text)

    @property
    def ok(self) -> bool:
        return not self.problems

    def text(self) -> str:
        lines = []
        if self.to_fill_in:
            lines.append("to fill in:")
            lines += [f"  - {item}" for item in self.to_fill_in]
        if self.problems:
            lines.append("problems:")
            lines += [f"  - {_indented(problem)}" for problem in self.problems]
        return "\n".join([*lines, *self.details])


def _indented(text: str) -> str:
    return text.replace("\n", "\n    ")
