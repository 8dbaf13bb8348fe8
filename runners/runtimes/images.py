"""Pictures for a CLI that takes them as bytes in its protocol (Claude Code's stream-json).

The bytes are read when the message is sent, not when the request is built (argv
builders stay pure), and the media type comes from the bytes, never from the name:
the four formats the model APIs take. A picture that cannot be read or is none of
them becomes a line of text saying so, so the model knows something was meant and
the run goes on, as codex does with a local image it cannot read.
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Sequence
from pathlib import Path
from typing import Any

# The signatures the model APIs' image formats begin with (WebP: RIFF, size, WEBP).
_SIGNATURES = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)


def media_type(data: bytes) -> str | None:
    """The picture's media type by its first bytes; None for anything else."""
    for signature, kind in _SIGNATURES:
        if data.startswith(signature):
            return kind
    if len(data) >= 12 and data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def image_block(path: Path) -> dict[str, Any]:
    """An Anthropic `image` content block of the file, or a `text` block saying why not."""
    try:
        data = path.read_bytes()
    except OSError as error:
        return _unsent(path, error.strerror or str(error))
    kind = media_type(data)
    if kind is None:
        return _unsent(path, "it is not a PNG, JPEG, GIF or WebP picture")
    encoded = base64.b64encode(data).decode("ascii")
    return {"type": "image", "source": {"type": "base64", "media_type": kind, "data": encoded}}


def _unsent(path: Path, why: str) -> dict[str, Any]:
    return {"type": "text", "text": f"(The picture {path} could not be attached: {why}.)"}


async def message_content(text: str, images: Sequence[Path]) -> str | list[dict[str, Any]]:
    """A user message's `content`: the text alone without pictures (as ever), else a list
    of the text block and one block per picture, read off the event loop."""
    if not images:
        return text
    blocks = await asyncio.to_thread(lambda: [image_block(path) for path in images])
    return [{"type": "text", "text": text}, *blocks]
