"""The board's words for what waits and what a split waits for,
in English and German (merged into texts.py)."""

# Sentences read better unwrapped.
# ruff: noqa: E501

from __future__ import annotations

EN: dict[str, str] = {
    "split_waits": "waits for its children: {done} of {total} done",
    "requests_waiting": "Requests waiting for an owner: {n} (in the owner's inbox and in chat)",
}

DE: dict[str, str] = {
    "split_waits": "wartet auf ihre Kinder: {done} von {total} fertig",
    "requests_waiting": "Anfragen, die auf einen Owner warten: {n} (im Eingang des Owners und im Chat)",
}
