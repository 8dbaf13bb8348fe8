"""No dispatch by string: `getattr` with a computed name is refused, read from the code.

A command's handler, a job kind's coroutine and a run's event are references a checker
and a reader can follow (chat/dispatch.py, pipeline/jobs.py, board/run_events.py);
`getattr(handlers, name)` is the kind of door nobody can follow. Every module of
chatbot/ and runners/ is parsed with ast, and a call of `getattr` or `setattr` whose
name is not a string literal fails the test where it is, unless a comment starting
with `# getattr:` on its line, or in the comment lines just above it, says why it is
not dispatch (a dataclass's fields copied, a configuration section found from its
network's record, ...).

`getattr` with a literal name (an attribute that only some types have, a platform's
constant) is not dispatch; it too says why in a `# getattr:` comment, so that
`grep -rn "getattr(" chatbot runners` shows each use with its reason. A deliberate
violation of each rule is caught (the check is tested too).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass

from tests.contracts.test_imports import PACKAGES, ROOT, module_name

BY_NAME = frozenset({"getattr", "setattr"})
WHY = "# getattr:"


@dataclass(frozen=True, order=True)
class Finding:
    module: str
    line: int
    call: str

    def __str__(self) -> str:
        return f"{self.module}:{self.line}: {self.call}"


def _justified(lines: list[str], line: int) -> bool:
    """A `# getattr:` comment on the call's line or in the comment block right above it;
    one reason heads a run of lines that each look up by name (three fields of one
    response, say)."""
    if WHY in lines[line - 1]:
        return True
    above = line - 2
    while above >= 0:
        text = lines[above].strip()
        if text.startswith(WHY):
            return True
        if not (text.startswith("#") or "getattr(" in text or "setattr(" in text):
            return False
        above -= 1
    return False


def _calls(tree: ast.AST) -> list[ast.Call]:
    """The calls of `getattr` and `setattr`, in the order of the source."""
    calls = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in BY_NAME
    ]
    return sorted(calls, key=lambda call: (call.lineno, call.col_offset))


def _computed(call: ast.Call) -> bool:
    """The name argument is anything but a string literal (or missing: `getattr(*args)`)."""
    if len(call.args) < 2:
        return True
    name = call.args[1]
    return not (isinstance(name, ast.Constant) and isinstance(name.value, str))


def findings(source: str, module: str, *, literal_too: bool = False) -> Iterator[Finding]:
    """The calls by name without a `# getattr:` reason: those with a computed name, and
    with `literal_too` those with a literal one as well."""
    lines = source.splitlines()
    for call in _calls(ast.parse(source)):
        if not (literal_too or _computed(call)):
            continue
        if not _justified(lines, call.lineno):
            yield Finding(module, call.lineno, ast.unparse(call))


def modules() -> Iterator[tuple[str, str]]:
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            yield module_name(path), path.read_text(encoding="utf-8")


def test_no_getattr_with_a_computed_name_without_its_reason() -> None:
    found = sorted(f for module, source in modules() for f in findings(source, module))
    assert [str(finding) for finding in found] == [], (
        "an attribute looked up by a computed name is dispatch by string: call a "
        f"reference instead, or say on the line above why it is not ({WHY} ...)"
    )


def test_every_getattr_says_why() -> None:
    found = sorted(
        f for module, source in modules() for f in findings(source, module, literal_too=True)
    )
    assert [str(finding) for finding in found] == [], (
        f"say why an attribute is looked up by name, in a {WHY} comment on the line above"
    )


# --- the check is tested too --------------------------------------------------------

PLANTED = """
def carry_out(handlers, command):
    name = command.handler
    return getattr(handlers, name)(command)


def set_flag(record, key):
    setattr(record, "flag_" + key, True)


def fields_of(row):
    # getattr: a dataclass's fields copied by their names
    return {f: getattr(row, f) for f in row.__dataclass_fields__}


def device_of(event):
    return getattr(event, "device", None)
"""


def test_a_planted_dispatch_by_name_is_caught_and_a_literal_name_passes() -> None:
    found = [str(finding) for finding in findings(PLANTED, "planted")]
    assert found == [
        "planted:4: getattr(handlers, name)",
        "planted:8: setattr(record, 'flag_' + key, True)",
    ]


def test_a_literal_name_without_its_reason_is_listed_by_the_stricter_rule() -> None:
    found = [str(finding) for finding in findings(PLANTED, "planted", literal_too=True)]
    assert "planted:17: getattr(event, 'device', None)" in found
    assert not any(line.startswith("planted:13:") for line in found)


def test_the_reason_is_read_on_the_line_or_the_comments_above_only() -> None:
    source = (
        "x = getattr(a, b)  # getattr: a trailing reason\n"
        "# getattr: a reason above\n"
        "# and its second line\n"
        "y = getattr(a, b)\n"
        "y2 = getattr(a, c)  # under the same reason: the line above looks up too\n"
        "# getattr: a reason that a blank line parts from its call\n"
        "\n"
        "z = getattr(a, b)\n"
        "w = (a, getattr(a, b))\n"
    )
    assert [f.line for f in findings(source, "m")] == [8, 9]
