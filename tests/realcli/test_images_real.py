"""Pictures reach the model through the real CLIs (issue 36, "to the agent"): each
scripted provider records the requests, and the picture's exact bytes must be in them,
as each API carries an image (Responses `input_image`, Messages `image`, Gemini
`inlineData`). The pictures lie where the bot puts them: in the card's worktree under
`runners.run_files.FOLDER`, which git ignores.

A steer with a picture is sent while the model's first command runs, which ends only once
the CLI said it took the steer (tests/realcli/talk_tap.py): the next request must carry
that picture."""

from __future__ import annotations

import asyncio
import base64
import io
import json
import os
from pathlib import Path
from typing import Any

from PIL import Image

from runners import run_files
from runners.runtimes import Delivered, Mode, Taken, run_model
from runners.workspace import create_worktree
from tests.pipeline.harness import make_repo
from tests.realcli.codex_talk_support import LIMITS, Bot, talk
from tests.realcli.harness import child_env, run_request
from tests.realcli.providers import Say, ScriptedModel, Seen, Shell
from tests.realcli.talk_tap import Tap, claude_queued, codex_took_steer, tap

STEER = "This one shows the error."


def picture(colour: tuple[int, int, int], size: tuple[int, int]) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, colour).save(out, "PNG")
    return out.getvalue()


FIRST = picture((200, 30, 30), (16, 9))
SECOND = picture((30, 30, 200), (9, 16))


async def pictures_in_worktree(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A card's worktree with the two pictures placed as the bot places them."""
    repo = make_repo(tmp_path, {})
    tree = await create_worktree(repo, tmp_path / "workspaces", "see-it", "main")
    assert await run_files.exclude_from_git(tree)
    first, second = run_files.place(
        tree.path / run_files.FOLDER, [("screen shot.png", FIRST), ("error.png", SECOND)]
    )
    return tree.path, first, second


def received(seen: Seen) -> list[bytes]:
    """The pictures in one provider request, in order, whichever API it is."""
    return pictures_in(seen.body)


def pictures_in(value: Any) -> list[bytes]:
    found: list[bytes] = []
    _walk(value, found)
    return found


def _walk(value: Any, found: list[bytes]) -> None:
    if isinstance(value, dict):
        url = value.get("image_url")
        if value.get("type") == "input_image" and isinstance(url, str):
            found.append(base64.b64decode(url.split(",", 1)[1]))  # Responses: a data URL
        elif value.get("type") == "image" and isinstance(value.get("source"), dict):
            found.append(base64.b64decode(value["source"]["data"]))  # Messages
        elif isinstance(value.get("inlineData"), dict):
            found.append(base64.b64decode(value["inlineData"]["data"]))  # Gemini
        else:
            for inner in value.values():
                _walk(inner, found)
    elif isinstance(value, list):
        for inner in value:
            _walk(inner, found)


class SteerWhileWaiting:
    """The model's first step is a command that waits for a named pipe in the worktree:
    while it runs, the bot steers with `image`, and once the CLI said it took the steer,
    the test writes the pipe and the command ends (no sleep, no race)."""

    COMMAND = "cat release.fifo"

    def __init__(self, tree: Path, bot: Bot, tapped: Tap, image: Path, took_it) -> None:
        self.fifo = tree / "release.fifo"
        os.mkfifo(self.fifo)
        self.bot, self.tapped, self.image, self.took_it = bot, tapped, image, took_it
        self.released: asyncio.Task[None] | None = None

    def on_step(self, step: str) -> None:
        if step.endswith(self.COMMAND) and self.released is None:
            self.bot.conversation.steer(STEER, "steer-1", images=(self.image,))
            self.released = asyncio.ensure_future(self._release())

    async def _release(self) -> None:
        await self.tapped.until(self.took_it)
        await asyncio.to_thread(self.fifo.write_text, "released\n")


async def test_codex_app_server_sends_the_prompts_picture_and_a_steers(
    cli_bins, responses_model: ScriptedModel, tmp_path: Path, monkeypatch
) -> None:
    tree, first, second = await pictures_in_worktree(tmp_path)
    bot = Bot()
    steering = SteerWhileWaiting(tree, bot, tap(monkeypatch), second, codex_took_steer)
    responses_model.script(Shell(steering.COMMAND), Say("Looked at both."))
    request = run_request(
        "codex",
        cli_bins,
        responses_model,
        tmp_path,
        tree,
        "What is wrong on screen?",
        mode=Mode.WORKSPACE_WRITE,
        images=(first,),
    )

    result = await talk(request, bot.conversation, tmp_path / "home", on_step=steering.on_step)

    assert result.ok, (result.failure, result.stderr_tail[-2000:])
    opened, steered = responses_model.seen
    assert received(opened) == [FIRST]
    # The next request: the prompt's picture in the history, the steer's after it, with
    # the command's output (one turn).
    assert received(steered) == [FIRST, SECOND]
    assert STEER in steered.user_texts
    assert "released" in steered.tool_results[-1]
    assert bot.told == [Delivered("steer-1"), Taken("steer-1")]
    assert result.output.answer == "Looked at both."


async def test_claude_stream_json_sends_the_prompts_picture_and_a_steers(
    cli_bins, messages_model: ScriptedModel, tmp_path: Path, monkeypatch
) -> None:
    tree, first, second = await pictures_in_worktree(tmp_path)
    bot = Bot()
    steering = SteerWhileWaiting(tree, bot, tap(monkeypatch), second, claude_queued(STEER))
    messages_model.script(Shell(steering.COMMAND), Say("Looked at both."))
    request = run_request(
        "claude",
        cli_bins,
        messages_model,
        tmp_path,
        tree,
        "What is wrong on screen?",
        mode=Mode.WORKSPACE_WRITE,
        images=(first,),
    )

    result = await talk(
        request, bot.conversation, tmp_path / "home", runtime="claude", on_step=steering.on_step
    )

    assert result.ok, (result.failure, result.stderr_tail[-2000:])
    opened, steered = messages_model.seen
    assert received(opened) == [FIRST]
    # The same turn: the command's result, then the steer (as a reminder) with its picture.
    assert received(steered) == [FIRST, SECOND]
    last = steered.body["messages"][-1]
    assert last["content"][0]["type"] == "tool_result" and steered.tool_results[-1] == "released"
    assert STEER in json.dumps(last) and pictures_in(last) == [SECOND]
    assert bot.told == [Delivered("steer-1"), Taken("steer-1")]
    assert result.output.answer == "Looked at both."


async def test_a_one_shot_run_sends_its_pictures(
    cli: str, model: ScriptedModel, cli_bins, tmp_path: Path
) -> None:
    """codex `exec --image`, Claude Code's `-p` (through stream-json for them), Gemini
    CLI's `@path` (one outside its workspace too): a read-only run nobody talks to."""
    tree, first, _ = await pictures_in_worktree(tmp_path)
    outside = tmp_path / "elsewhere" / "outside.png"
    outside.parent.mkdir()
    outside.write_bytes(SECOND)
    images = (first, outside)
    model.script(Say(f"{cli} saw it."))
    request = run_request(cli, cli_bins, model, tmp_path, tree, "What is wrong?", images=images)

    result = await run_model(cli, request, limits=LIMITS, base_env=child_env(tmp_path / "home"))

    assert result.ok, (result.failure, result.stderr_tail[-2000:])
    assert result.output.answer == f"{cli} saw it."
    [seen] = model.seen
    # Gemini CLI puts the files it read in an order of its own (measured: by path).
    ordered = sorted if cli == "gemini" else list
    assert ordered(received(seen)) == ordered([FIRST, SECOND])
    assert "What is wrong?" in " ".join(seen.user_texts)
