"""Helpers shared by the role contracts: strict JSON, error translation, text types."""

from __future__ import annotations

import json
import re
from typing import Annotated, Any, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, ValidationError

from runners.contracts.errors import ContractError
from runners.profiles import SLUG_RE

M = TypeVar("M", bound=BaseModel)

# Every contract model: no unknown fields, no coercion ("1" is not 1, true is not 1).
STRICT = ConfigDict(strict=True, extra="forbid", frozen=True)

MAX_KEY_CHARS = 60

_CONTROL_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_LINE_BREAK_RE = re.compile(r"[\n\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")


def shown(value: object, limit: int = 60) -> str:
    """A value quoted for an error message, cut short: messages end up in chat."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _non_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty")
    return value


def _single_line(value: str) -> str:
    _non_blank(value)
    if _LINE_BREAK_RE.search(value) or _CONTROL_RE.search(value):
        raise ValueError("must be a single line without control characters")
    return value


def _slug(value: str) -> str:
    if SLUG_RE.fullmatch(value) is None:
        raise ValueError(f"{shown(value)} is not a slug (^[a-z0-9][a-z0-9-]{{0,60}}$)")
    return value


def _schema_version(value: int) -> int:
    if value != 1:
        raise ValueError("must be 1")
    return value


NonBlank = Annotated[str, AfterValidator(_non_blank)]
SingleLine = Annotated[str, AfterValidator(_single_line)]
Slug = Annotated[str, AfterValidator(_slug)]
SchemaVersion = Annotated[int, AfterValidator(_schema_version)]


def field_path(loc: tuple[int | str, ...]) -> str:
    """('children', 2, 'wave') -> 'children[2].wave'; long unknown keys are cut short."""
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
            continue
        name = part if len(part) <= MAX_KEY_CHARS else part[: MAX_KEY_CHARS - 3] + "..."
        path = f"{path}.{name}" if path else name
    return path


# Pydantic's wording talks about Python types; the model wrote JSON.
_RULES = {
    "extra_forbidden": "unknown field",
    "missing": "required field is missing",
    "int_type": "must be a JSON integer",
    "string_type": "must be a JSON string",
    "tuple_type": "must be a JSON array",
    "model_type": "must be a JSON object",
    "model_attributes_type": "must be a JSON object",
    "too_long": "has {actual_length} items, at most {max_length} allowed",
    "too_short": "has {actual_length} items, at least {min_length} required",
    "greater_than_equal": "must be at least {ge}",
    "less_than_equal": "must be at most {le}",
    "literal_error": "must be {expected}",
}


def contract_error_from(error: ValidationError, root: str) -> ContractError:
    """Name the first broken field; one precise complaint beats a wall of them."""
    first = error.errors()[0]
    field = field_path(tuple(first["loc"])) or root
    template = _RULES.get(first["type"])
    try:
        rule = template.format(**first.get("ctx", {})) if template else first["msg"]
    except (KeyError, IndexError):
        rule = first["msg"]
    if rule.startswith("Value error, "):
        rule = rule[len("Value error, ") :]
    return ContractError(field, rule)


class _DuplicateKey(Exception):
    def __init__(self, key: str) -> None:
        self.key = key


def _pairs_without_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            # Which of two values a parser keeps is an accident; refuse both.
            raise _DuplicateKey(key)
        result[key] = value
    return result


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def check_json_object(raw: str, field: str) -> None:
    """Syntax-check `raw` as one JSON object with no duplicate keys and no NaN.

    The models then validate the same text with pydantic's own JSON parser, so
    what was checked here and what gets validated cannot differ.
    """
    try:
        value = json.loads(
            raw, object_pairs_hook=_pairs_without_duplicates, parse_constant=_no_constants
        )
    except _DuplicateKey as duplicate:
        raise ContractError(field_path((duplicate.key,)), "duplicate key") from None
    except RecursionError:
        raise ContractError(field, "JSON is nested too deeply") from None
    except ValueError as error:  # JSONDecodeError, huge integers, NaN
        raise ContractError(field, f"invalid JSON ({error})") from None
    if not isinstance(value, dict):
        raise ContractError(field, "must hold one JSON object")


def build(model: type[M], field: str, **values: Any) -> M:
    """Construct a model from parsed pieces; a rejected value is the answer's fault.

    `field` prefixes the failing field's name (for example the block it came from).
    """
    try:
        return model(**values)
    except ValidationError as error:
        inner = contract_error_from(error, field)
        name = inner.field if inner.field == field else f"{field}.{inner.field}"
        raise ContractError(name, inner.rule) from None


def validate_json(model: type[M], raw: str, field: str) -> M:
    check_json_object(raw, field)
    try:
        return model.model_validate_json(raw, strict=True)
    except ValidationError as error:
        raise contract_error_from(error, field) from None
