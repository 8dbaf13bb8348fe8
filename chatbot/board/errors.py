"""The board's refusals: the base every one of them shares."""

from __future__ import annotations


class BoardError(Exception):
    """A request the board refuses; the message is meant for the person who asked."""
