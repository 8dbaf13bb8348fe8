"""Pictures for the model (`RunRequest.images`, `Steer.images`): what each runtime builds
of them, the checks before anything runs, and the scripted stand-ins taking them as the
real CLIs do (tests/realcli/test_images_real.py sends them through the real ones)."""

from __future__ import annotations

import asyncio
import base64
import io
import json
from dataclasses import replace
from pathlib import Path

import pytest
from PIL import Image

from runners.runtimes import (
    Conversation,
    Decision,
    InvalidRequest,
    RunRequest,
    Steer,
    Taken,
    codex,
    gemini,
    openrouter,
    run_model,
)
from runners.runtimes.base import MAX_IMAGES
from runners.runtimes.claude_talk import converse as claude_converse
from runners.runtimes.codex_talk import user_input
from runners.runtimes.images import image_block, media_type, message_content
from tests.runners.conftest import FAKE_CLAUDE, FAKE_CODEX, FAST, FakeCli
from tests.runners.test_claude_talk import ScriptedPipe


def picture(fmt: str, size: tuple[int, int] = (4, 3)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, (10, 200, 30)).save(out, fmt)
    return out.getvalue()


def request(cwd: Path, *images: Path, **fields) -> RunRequest:
    fields.setdefault("binary", "codex")
    return RunRequest(cwd=cwd, prompt="Look.", images=images, **fields)


# --- the checks -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("images", "why"),
    [
        ((Path("shot.png"),), "absolute"),
        ((Path("/w/a\nb.png"),), "control character"),
        ((Path("/w/a,b.png"),), "comma"),
        (tuple(Path(f"/w/{n}.png") for n in range(MAX_IMAGES + 1)), "at most 8"),
        (("/w/shot.png",), "absolute path"),
    ],
)
def test_pictures_no_cli_may_be_given_are_refused_before_anything_runs(
    tmp_path: Path, images: tuple, why: str
) -> None:
    with pytest.raises(InvalidRequest, match=why):
        codex.build_argv(request(tmp_path, *images))
    conversation = Conversation(lambda asked: None)
    with pytest.raises(InvalidRequest, match=why):
        conversation.steer("See this.", "s-1", images=images)
    assert conversation.pending() == []


def test_a_list_of_pictures_is_kept_as_a_tuple_and_a_steer_carries_its_own(tmp_path) -> None:
    shot = tmp_path / "shot.png"
    assert RunRequest(binary="codex", cwd=tmp_path, prompt="p", images=[shot]).images == (shot,)
    conversation = Conversation(lambda asked: None)
    conversation.steer("See this.", "s-1", images=[shot])
    conversation.steer("And this.", "s-2")
    assert conversation.pending() == [
        Steer("See this.", "s-1", (shot,)),
        Steer("And this.", "s-2", ()),
    ]


# --- what each runtime builds -----------------------------------------------------------


def test_codex_exec_takes_each_picture_right_after_exec(tmp_path: Path) -> None:
    one, two = tmp_path / "a.png", tmp_path / "b.png"
    argv = list(codex.build_argv(request(tmp_path, one, two)).argv)
    at = argv.index("exec")
    # Before --json: `--image` takes every word up to the next option, the final `-` too.
    assert argv[at + 1 : at + 9] == [
        "--ignore-user-config",
        "--skip-git-repo-check",
        "--image",
        str(one),
        "--image",
        str(two),
        "--json",
        "--color",
    ]
    resumed = list(codex.build_argv(request(tmp_path, one, resume_session_id="th-1")).argv)
    assert resumed[-3:] == ["resume", "th-1", "-"]
    assert resumed.index("--image") < resumed.index("resume")
    assert "--image" not in codex.build_argv(request(tmp_path)).argv
    # OpenRouter runs codex's program: the same options.
    routed = openrouter.build_argv(
        request(tmp_path, one, model="vendor/model", api_key_file=tmp_path / "key")
    )
    assert routed.argv[routed.argv.index("exec") + 3 : routed.argv.index("--json")] == (
        "--image",
        str(one),
    )


def test_codex_app_server_input_is_the_text_then_local_images() -> None:
    shot = Path("/w/.chatbot-files/shot.png")
    assert user_input("Look.", (shot,)) == [
        {"type": "text", "text": "Look."},
        {"type": "localImage", "path": str(shot)},
    ]
    assert user_input("Look.", ()) == [{"type": "text", "text": "Look."}]


def test_gemini_names_each_picture_in_the_prompt_and_widens_its_workspace_for_outside_ones(
    tmp_path: Path,
) -> None:
    inside = tmp_path / "tree" / ".chatbot-files" / "shot.png"
    outside = tmp_path / "elsewhere" / "odd name (1).png"
    built = gemini.build_argv(
        request(
            tmp_path / "tree",
            inside,
            outside,
            binary="gemini",
            home=tmp_path / "home",
            api_key_file=tmp_path / "key",
        )
    )
    assert built.stdin == (
        f"Look.\n\nAttached pictures: @{inside} @{tmp_path}/elsewhere/odd\\ name\\ \\(1\\).png\n"
    )
    at = built.argv.index("--include-directories")
    assert built.argv[at : at + 2] == ("--include-directories", str(outside.parent))
    assert built.argv.count("--include-directories") == 1
    plain = gemini.build_argv(request(tmp_path, binary="gemini", home=tmp_path / "home"))
    assert plain.stdin == "Look." and "--include-directories" not in plain.argv


def test_a_reference_ending_in_a_dot_keeps_it() -> None:
    assert gemini.at_reference(Path("/w/notes.")) == "@/w/notes\\."


@pytest.mark.parametrize(
    ("fmt", "kind"),
    [("PNG", "image/png"), ("JPEG", "image/jpeg"), ("GIF", "image/gif"), ("WEBP", "image/webp")],
)
def test_a_pictures_type_comes_from_its_bytes(tmp_path: Path, fmt: str, kind: str) -> None:
    data = picture(fmt)
    assert media_type(data) == kind
    # Named as something else: the bytes decide.
    path = tmp_path / "shot.txt"
    path.write_bytes(data)
    source = image_block(path)["source"]
    assert (source["media_type"], base64.b64decode(source["data"])) == (kind, data)


async def test_a_picture_that_cannot_be_sent_becomes_a_line_saying_so(tmp_path: Path) -> None:
    notes = tmp_path / "notes.png"
    notes.write_text("not a picture")
    gone = tmp_path / "gone.png"
    content = await message_content("Look.", (notes, gone))
    assert content[0] == {"type": "text", "text": "Look."}
    assert content[1]["type"] == content[2]["type"] == "text"
    assert "not a PNG, JPEG, GIF or WebP" in content[1]["text"]
    assert str(gone) in content[2]["text"] and "No such file" in content[2]["text"]
    # No pictures: the content stays the plain text it always was.
    assert await message_content("Look.", ()) == "Look."


# --- the scripted stand-ins, as the pipeline tests run them ------------------------------


async def test_the_scripted_codex_takes_pictures_one_shot_and_over_app_server(
    fake_cli: FakeCli, workdir: Path
) -> None:
    shot = workdir / "shot.png"
    shot.write_bytes(picture("PNG"))
    fake_cli.write({"answer": "seen"}, {"answer": "seen again"})
    base = RunRequest(binary=FAKE_CODEX, cwd=workdir, prompt="ROLE=reviewer Look.")
    looked = replace(base, images=(shot,))

    once = await run_model("codex", looked, limits=FAST, base_env=fake_cli.env)
    talked = await run_model(
        "codex",
        looked,
        limits=FAST,
        base_env=fake_cli.env,
        conversation=Conversation(_deny),
    )

    assert once.ok and talked.ok, (once.failure, talked.failure)
    assert [call["images"] for call in fake_cli.calls()] == [[str(shot)], [str(shot)]]


async def test_the_scripted_claude_takes_pictures_of_a_one_shot_run_over_stream_json(
    fake_cli: FakeCli, workdir: Path
) -> None:
    shot = workdir / "shot.jpg"
    shot.write_bytes(picture("JPEG"))
    fake_cli.write({"answer": "seen"}, {"answer": "plain"})
    base = RunRequest(binary=FAKE_CLAUDE, cwd=workdir, prompt="ROLE=reviewer Look.")

    looked = await run_model(
        "claude", replace(base, images=(shot,)), limits=FAST, base_env=fake_cli.env
    )
    plain = await run_model("claude", base, limits=FAST, base_env=fake_cli.env)

    assert looked.ok and plain.ok, (looked.failure, plain.failure)
    assert looked.output.answer == "seen"
    first, second = fake_cli.calls()
    # Only the protocol carries pictures: the one-shot run with one spoke it.
    assert "--input-format" in first["argv"] and "--input-format" not in second["argv"]
    assert (first["stdin"], first["images"]) == ("ROLE=reviewer Look.", ["image/jpeg"])
    assert second["images"] == []
    assert "--permission-prompt-tool" not in first["argv"]  # read-only: nothing is asked


async def _deny(asked) -> Decision:
    return Decision(False, "not expected")


# --- the claude driver: pictures written, a steer taken without its (too long) replay ---


async def test_claude_pictures_are_written_as_image_blocks_and_a_steer_is_taken_by_its_start(
    tmp_path: Path,
) -> None:
    first, second = tmp_path / "first.png", tmp_path / "second.gif"
    first.write_bytes(picture("PNG"))
    second.write_bytes(picture("GIF"))
    pipe = ScriptedPipe()
    told: list = []
    conversation = Conversation(_deny, told.append)
    run = asyncio.ensure_future(
        claude_converse(pipe, request(tmp_path, first, binary="claude"), conversation)
    )

    prompt = await pipe.next_written()
    assert prompt["message"]["content"] == [
        {"type": "text", "text": "Look."},
        image_block(first),
    ]
    conversation.steer("This too.", "s-1", images=(second,))
    steer = await pipe.next_written()
    [text, block] = steer["message"]["content"]
    assert text == {"type": "text", "text": "This too."}
    assert base64.b64decode(block["source"]["data"]) == second.read_bytes()
    assert block["source"]["media_type"] == "image/gif"
    # Its replay, pictures and all, was longer than the pipe takes: only its start says so.
    started = {"type": "command_lifecycle", "command_uuid": steer["uuid"], "state": "started"}
    pipe.lines.put_nowait(json.dumps(started).encode())
    pipe.lines.put_nowait(json.dumps({"type": "result", "subtype": "success"}).encode())
    await asyncio.wait_for(run, 5)
    assert told == [Taken("s-1")]
