"""The configuration reference, made from the config models themselves: every section,
every key, its type, its default, and what it is for: the comment written above it in
the model's source, else the one above it in the example configuration (the file
`chatbot init` writes). The documentation site shows this (docs/hooks.py), so it cannot
drift from what the bot accepts; a key with neither is a test failure, not a blank cell.
"""

from __future__ import annotations

import inspect
import io
import re
import textwrap
import tokenize
import types
import typing
from pathlib import Path
from typing import Any, get_args, get_origin

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

# The sections as they appear in a file, and how many of each a file may have.
TABLE_OF = {"runtimes": "runtimes.NAME", "lanes": "lanes.NAME", "roles": "roles.ROLE"}


def field_comments(model: type[BaseModel]) -> dict[str, str]:
    """The `#` comment lines right above each field of `model`'s class body (and the
    one at the end of its line), joined: what the source says a key is for."""
    lines = textwrap.dedent(inspect.getsource(model)).splitlines()
    comments = {
        token.start[0]: token.string.lstrip("#").strip()
        for token in tokenize.generate_tokens(io.StringIO("\n".join(lines)).readline)
        if token.type == tokenize.COMMENT
    }
    found: dict[str, str] = {}
    pending: list[str] = []
    for number, text in enumerate(lines, 1):
        field = re.match(r"    (\w+)\s*:", text)
        if field and not text.startswith("     "):
            trailing = comments.get(number)
            found[field.group(1)] = " ".join([*pending, *([trailing] if trailing else [])])
            pending = []
        elif number in comments and text.lstrip().startswith("#"):
            pending.append(comments[number])
        else:
            pending = []
    return found


def example_comments(text: str) -> dict[str, str]:
    """`section.key` (a table's name generalised: `runtimes.NAME.binary`) to the comment
    lines above that key in the example configuration, commented-out keys too."""
    found: dict[str, str] = {}
    section = ""
    pending: list[str] = []
    for raw in text.splitlines():
        line = raw.strip()
        header = re.fullmatch(r"\[([\w.]+)\]", line)
        key = re.match(r"#?\s*(\w+)\s*=", line)
        if header:
            parts = header.group(1).split(".")
            table = {"runtimes": "NAME", "lanes": "NAME", "roles": "ROLE"}.get(parts[0])
            section = f"{parts[0]}.{table}" if table and len(parts) > 1 else header.group(1)
            pending = []
        elif key and (not line.startswith("#") or "=" in line[:40]) and " " not in key.group(1):
            name = f"{section}.{key.group(1)}"
            trailing = (
                raw.split("#", 2)[-1].strip() if raw.count("#") > line.startswith("#") else ""
            )
            words = [*pending, trailing] if trailing else pending
            if words and name not in found:
                found[name] = " ".join(words)
            pending = []
        elif line.startswith("#"):
            pending.append(line.lstrip("#").strip())
        else:
            pending = []
    return found


def type_name(annotation: Any) -> str:
    """A key's type in a reader's words: `int`, `list of str`, `"auto" | "off"`."""
    origin = get_origin(annotation)
    if origin is typing.Annotated:
        return type_name(get_args(annotation)[0])
    if origin is typing.Literal:
        return " | ".join(f'"{v}"' if isinstance(v, str) else str(v) for v in get_args(annotation))
    if origin in (typing.Union, types.UnionType):
        parts = [type_name(a) for a in get_args(annotation) if a is not type(None)]
        optional = type(None) in get_args(annotation)
        return " | ".join(parts) + (" (optional)" if optional else "")
    if origin in (list, tuple, set, frozenset):
        args = [a for a in get_args(annotation) if a is not Ellipsis]
        return f"list of {type_name(args[0])}" if args else "list"
    if origin is dict:
        key, value = get_args(annotation)
        return f"table of {type_name(value)}"
    if annotation is Path:
        return "path"
    # getattr: a class has a __name__; a typing construct (a union, a Literal) has none
    return getattr(annotation, "__name__", str(annotation)).replace("typing.", "")


def default_shown(info: FieldInfo) -> str:
    if info.is_required():
        return "required"
    value = info.get_default(call_default_factory=True)
    if value is PydanticUndefined or value is None:
        return "unset"
    if isinstance(value, BaseModel):
        return "(section)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, Path):
        return f'"{value}"'
    if isinstance(value, list | tuple) and not value:
        return "[]"
    if isinstance(value, dict) and not value:
        return "{}"
    return f"`{value!r}`".replace("`", "") if not isinstance(value, int | float) else str(value)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def section_model(annotation: Any) -> type[BaseModel] | None:
    """The model a top-level key holds: the section itself, or the value of its table."""
    origin = get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        for arg in get_args(annotation):
            if isinstance(arg, type) and issubclass(arg, BaseModel):
                return arg
    if origin is dict:
        return section_model(get_args(annotation)[1])
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return None


def sections(root: type[BaseModel]) -> list[tuple[str, type[BaseModel]]]:
    found = []
    for name, info in root.model_fields.items():
        if info.exclude:
            continue
        model = section_model(info.annotation)
        if model is not None:
            found.append((TABLE_OF.get(name, name), model))
    return found


def _said(root: type[BaseModel], example: str) -> dict[str, dict[str, str]]:
    told = example_comments(example)
    return {
        title: {
            name: field_comments(model).get(name) or told.get(f"{title}.{name}", "")
            for name in model.model_fields
        }
        for title, model in sections(root)
    }


def undocumented(root: type[BaseModel], example: str) -> list[str]:
    """Keys nothing says anything about: the reference would have a blank cell."""
    said = _said(root, example)
    return [
        f"{title}.{name}"
        for title, model in sections(root)
        for name, info in model.model_fields.items()
        if not info.exclude and not said[title][name]
    ]


def markdown(root: type[BaseModel], example: str) -> str:
    """Every section of the configuration file as a table of its keys."""
    out = []
    said = _said(root, example)
    for title, model in sections(root):
        comments = said[title]
        out += [f"## `[{title}]`", ""]
        doc = inspect.getdoc(model)
        if doc and doc != inspect.getdoc(BaseModel) and not doc.startswith("!!!"):
            out += [doc, ""]
        out += ["| key | type | default | what it is for |", "|---|---|---|---|"]
        for name, info in model.model_fields.items():
            if info.exclude:
                continue
            out.append(
                f"| `{name}` | {_cell(type_name(info.annotation))} | "
                f"{_cell(default_shown(info))} | {_cell(comments.get(name, ''))} |"
            )
        out.append("")
    return "\n".join(out)
