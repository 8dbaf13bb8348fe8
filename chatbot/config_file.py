"""What a configuration file holds besides the model: paths, and problems in plain words.

Relative paths in the file are relative to the file, so a service can start
anywhere; every key of a section whose type is a path is resolved the same way.
Problems are reported as the key as written in the file, then what is wrong.

pydantic's messages name regular expressions and internal locations
(`runtimes.openrouterx.[key]`); the person reading ours is usually looking at a
service log on a phone. Unknown keys come first, with the closest known key,
because a misspelt key also causes the "missing key" that follows it.
"""

from __future__ import annotations

import difflib
import ipaddress
import re
from pathlib import Path
from typing import Any, get_args

from pydantic import BaseModel, ValidationError

from runners.profiles import MODEL_PATTERN, REASONING_EFFORT_PATTERN

# What a pattern means, in words, by the pattern itself (config.py declares them).
PATTERN_WORDS: dict[str, str] = {}


class KeyProblem(ValueError):
    """A validator's finding about one key, reported as that key and the problem."""

    def __init__(self, key: str, problem: str):
        super().__init__(f"{key}: {problem}")
        self.key = key
        self.problem = problem


def describe_pattern(pattern: str, words: str) -> str:
    """Register what `pattern` means; returns the pattern, for use in Field(pattern=...)."""
    PATTERN_WORDS[pattern] = words
    return pattern


describe_pattern(
    f"^$|{MODEL_PATTERN}",
    "a model name such as gpt-5-codex (letters, digits and . _ : / @ + -), or empty for "
    "the CLI's default",
)
describe_pattern(
    REASONING_EFFORT_PATTERN, "a reasoning effort such as low, medium or high, or empty"
)

# The shapes of the values a user writes, each with its words (identities: each chat
# network's record, in chatbot/config/chat.py).
# Aliases carry a server; room ids of room version 12 and later do not.
MATRIX_ROOM_RE = re.compile(r"^(#[^:\s]+:[A-Za-z0-9.-]+(:\d+)?|![^:\s]+(:[A-Za-z0-9.-]+(:\d+)?)?)$")
NAME_RE = describe_pattern(
    r"^[a-z][a-z0-9_-]{0,31}$",
    "a lane name: lowercase letters, digits, - and _, starting with a letter",
)
PREFIX_PATTERN = describe_pattern(
    r"^[^\sA-Za-z0-9]{1,2}$", "a command prefix of one or two signs, such as / or !"
)
HOMESERVER_PATTERN = describe_pattern(
    r"^https?://[^\s/]+(/[^\s]*)?$", "an http(s) address such as https://matrix.example.org"
)
ENV_NAME = describe_pattern(
    r"^[A-Z_][A-Z0-9_]{0,63}$", "an environment variable name (A-Z, digits and _)"
)
DATABASE_URL_PATTERN = describe_pattern(
    r"^postgres(ql)?://[^\s:@/]+@[^\s/@]+(:\d{1,5})?/[^\s/?]+(\?[^\s]*)?$",
    "a file path, or a PostgreSQL address such as postgresql://board@db.example.org:5432/board "
    "(the password goes in database_password_file, not in the address)",
)
GIT_URL_PATTERN = describe_pattern(
    r"^((ssh|https?|git|file)://[^\s]+|[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:[^\s]+)$",
    "a folder, or a git address such as git@git.example.org:team/app.git, "
    "https://git.example.org/team/app.git or file:///srv/git/app.git",
)
LISTEN_PATTERN = describe_pattern(
    r"^(\d{1,3}(\.\d{1,3}){3}|\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):\d{1,5}$",
    "an address and port such as 127.0.0.1:8080 or [::1]:8080",
)

_HOST_LABEL_RE = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$")


def listen_problem(listen: str) -> str | None:
    """What is wrong with an address:port of the right shape (LISTEN_PATTERN), or None.

    The shape lets 99999 or 999.1.1.1 through; bind() would refuse them only when the
    bot starts, after `chatbot check` passed."""
    host, _, port = listen.rpartition(":")
    if not 1 <= int(port) <= 65535:
        return f"port {int(port)} is not between 1 and 65535"
    if host.startswith("["):
        try:
            ipaddress.IPv6Address(host[1:-1])
        except ValueError:
            return f"{host} is not an IPv6 address"
        return None
    if re.fullmatch(r"[\d.]+", host):
        try:
            ipaddress.IPv4Address(host)
        except ValueError:
            return f"{host} is not an IPv4 address (four numbers from 0 to 255)"
        return None
    if len(host) > 253 or not all(_HOST_LABEL_RE.match(label) for label in host.split(".")):
        return f"{host} is not a host name (letters, digits and - between dots)"
    return None


def database_file_problem(path: Path | str) -> str | None:
    """What keeps SQLite from making or opening its file at `path`, or None (also for
    a PostgreSQL address)."""
    if isinstance(path, str):
        return None
    if path.is_dir():
        return f"{path} is a folder; name the database file in it, e.g. {path / 'board.sqlite3'}"
    if path.exists() and not path.is_file():
        return f"{path} is not a regular file; name the database file"
    for folder in path.parents:
        if folder.exists():
            return None if folder.is_dir() else f"{folder} is a file, not a folder"
    return None


# Values of keys that name a file: a URL there is a mistake, not a strange file name.
URL_RE = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://")
# ... except where an address is one of the choices: the shared database, a git remote.
ADDRESS_KEYS = {
    ("bot", "database"): ("postgresql", "postgres"),
    ("bot", "repo"): ("ssh", "https", "http", "git", "file"),
}
SCP_LIKE_RE = re.compile(r"^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:")


def _path_keys(model: type[BaseModel]) -> set[str]:
    """The keys of a section that hold a file or folder path."""
    return {
        name
        for name, field in model.model_fields.items()
        if name != "source" and Path in (field.annotation, *get_args(field.annotation))
    }


def _sections(
    data: dict[str, Any], model: type[BaseModel]
) -> list[tuple[str, dict[str, Any], type[BaseModel]]]:
    """Every section table of the file with its model: [bot], [xmpp], [runtimes.NAME], ..."""
    found = []
    for name, field in model.model_fields.items():
        table = data.get(name)
        if not isinstance(table, dict):
            continue
        annotation = field.annotation
        for candidate in (annotation, *get_args(annotation)):
            args = get_args(candidate)
            if isinstance(candidate, type) and issubclass(candidate, BaseModel):
                found.append((name, table, candidate))
                break
            if len(args) == 2 and isinstance(args[1], type) and issubclass(args[1], BaseModel):
                found += [
                    (f"{name}.{key}", sub, args[1])
                    for key, sub in table.items()
                    if isinstance(sub, dict)
                ]
                break
    return found


def resolve_paths(data: dict[str, Any], base: Path, model: type[BaseModel]) -> str | None:
    """Relative paths are relative to the config file, so a service can start anywhere.

    Returns the problem when a path key holds something else (a URL), else None.
    """
    bot = data.get("bot")
    if isinstance(bot, dict):
        bot.setdefault("database", "var/board.sqlite3")
        bot.setdefault("workspaces", "var/workspaces")
    for where, table, section in _sections(data, model):
        for key in _path_keys(section):
            value = table.get(key)
            if not isinstance(value, str):
                continue
            schemes = ADDRESS_KEYS.get((where, key))
            if schemes and (URL_RE.match(value) or SCP_LIKE_RE.match(value)):
                continue  # an address: the model checks its form
            if URL_RE.match(value):
                scheme = value.split("://")[0]
                return (
                    f"{where}.{key}: {scheme}:// is an address, not a file; "
                    "this key takes a file path"
                )
            # strict mode wants Path objects for Path fields; TOML gives strings.
            table[key] = (base / value).resolve()
    for table in (data.get("runtimes") or {}).values():
        if not isinstance(table, dict):
            continue
        env = table.get("env")
        if isinstance(env, dict):
            for name, value in env.items():
                if isinstance(value, str) and value.startswith(("./", "../")):
                    env[name] = str((base / value).resolve())
        for key in ("read_paths", "write_paths"):
            paths = table.get(key)
            if isinstance(paths, list):
                table[key] = [
                    str((base / path).resolve()) if isinstance(path, str) else path
                    for path in paths
                ]
        binary = table.get("binary")
        # A binary given as a relative path (./x, tests/bin/codex) is next to the config;
        # a bare name is looked up on PATH when it runs.
        if isinstance(binary, str) and "/" in binary and not binary.startswith("/"):
            table["binary"] = str((base / binary).resolve())
    return None


_TYPE_WORDS = {
    "int_type": "must be a whole number",
    "int_parsing": "must be a whole number",
    "float_type": "must be a number",
    "bool_type": "must be true or false",
    "string_type": "must be text in quotes",
    "list_type": 'must be a list, like ["a", "b"]',
    "dict_type": "must be a table",
    "model_type": "must be a table",
    "path_type": "must be a file path in quotes",
    "is_instance_of": "must be a file path in quotes",
}


def describe(error: ValidationError, file: object, model: type[BaseModel]) -> str:
    items = sorted(error.errors(), key=lambda item: item["type"] != "extra_forbidden")
    lines = []
    for item in items:
        key, problem = _key_and_problem(item, model)
        lines.append(f"{file}: {key or '(top level)'}: {problem}")
    return "\n".join(lines)


def _key_and_problem(item: Any, model: type[BaseModel]) -> tuple[str, str]:
    loc = [str(part) for part in item["loc"] if not str(part).startswith("function-")]
    kind, ctx = item["type"], item.get("ctx") or {}
    if loc and loc[-1] == "[key]":
        # The name of a table is wrong, e.g. [runtimes.openrouterx].
        loc = loc[:-1]
        return ".".join(loc), _bad_name(kind, ctx, loc[-1] if loc else "")
    key = ".".join(loc)
    error = ctx.get("error")
    if kind == "value_error" and isinstance(error, KeyProblem):
        return error.key, error.problem
    if kind == "extra_forbidden":
        close = _closest(model, loc)
        return key, "unknown key" + (f"; did you mean {close}?" if close else "")
    if kind == "missing":
        return key, "missing required key"
    if kind == "string_pattern_mismatch":
        words = PATTERN_WORDS.get(ctx.get("pattern", ""), "a different value")
        return key, f"{_shown(item.get('input'))} is not {words}"
    if kind == "literal_error":
        return key, f"{_shown(item.get('input'))} is not one of {_choices(ctx)}"
    if kind in ("greater_than_equal", "greater_than"):
        return key, f"must be at least {ctx.get('ge', ctx.get('gt'))}"
    if kind in ("less_than_equal", "less_than"):
        return key, f"must be at most {ctx.get('le', ctx.get('lt'))}"
    if kind == "too_short":
        return key, "must not be empty"
    if kind == "too_long":
        return key, f"has too many entries (at most {ctx.get('max_length')})"
    if kind in _TYPE_WORDS:
        return key, _TYPE_WORDS[kind]
    return key, str(item["msg"]).removeprefix("Value error, ")


def _bad_name(kind: str, ctx: dict[str, Any], name: str) -> str:
    if kind == "literal_error":
        return f"{_shown(name)} is not a known name; use one of {_choices(ctx)}"
    words = PATTERN_WORDS.get(ctx.get("pattern", ""), "a valid name")
    return f"{_shown(name)} is not {words}"


def _choices(ctx: dict[str, Any]) -> str:
    expected = str(ctx.get("expected", ""))
    return expected.replace("'", "").replace(" or ", ", ")


def _shown(value: object) -> str:
    text = str(value)
    return repr(text if len(text) <= 60 else text[:57] + "...")


def _closest(model: type[BaseModel], loc: list[str]) -> str | None:
    """The known key nearest to the unknown one, at the same place in the file."""
    fields = _fields_at(model, loc[:-1])
    if not fields:
        return None
    found = difflib.get_close_matches(loc[-1], fields, n=1, cutoff=0.6)
    return ".".join([*loc[:-1], found[0]]) if found else None


def _fields_at(model: type[BaseModel], path: list[str]) -> list[str]:
    current: Any = model
    parts = iter(path)
    for part in parts:
        field = current.model_fields.get(part) if _is_model(current) else None
        if field is None:
            return []
        current, named = _section_type(field.annotation)
        if named:
            next(parts, None)  # a table of named sections: [lanes.<name>]
    return [name for name in current.model_fields if name != "source"] if _is_model(current) else []


def _section_type(annotation: Any) -> tuple[Any, bool]:
    """The section model inside `X | None` or `dict[str, X]`, and whether it was a dict."""
    for candidate in (annotation, *get_args(annotation)):
        if _is_model(candidate):
            return candidate, False
        args = get_args(candidate)
        if len(args) == 2 and _is_model(args[1]):
            return args[1], True
    return None, False


def _is_model(value: Any) -> bool:
    return isinstance(value, type) and issubclass(value, BaseModel)
