"""The approval policy of each kind of codex run the bot talks to, on the real codex
(`codex app-server`): a builder is asked only to leave its sandbox, a reader never; a
run outside git; the openrouter runtime through the same protocol."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from runners.runtimes import Decision, Delivered, Mode, Taken, run_model
from tests.pipeline.harness import git, make_repo
from tests.realcli.codex_talk_support import LIMITS, Bot, heard, talk, write_request
from tests.realcli.harness import child_env, run_request
from tests.realcli.openai_responses import Escalate, Patch
from tests.realcli.providers import Say, Shell


async def test_a_builder_is_asked_about_nothing_its_sandbox_allows(
    cli_bins, responses_model, tmp_path: Path
) -> None:
    """The approval policy of a writing role (`on-request`): commands and edits inside the
    workspace-write sandbox run unasked, a write the sandbox refuses fails to the model
    without a question; only the model's own request to leave the sandbox is asked."""
    repo = make_repo(tmp_path, {})
    outside = Path("/var/tmp") / f"intent-board-{tmp_path.name}.txt"
    responses_model.script(
        Shell("git status --short && echo inside > inside.txt"),
        Patch("patched.txt", "patched\n"),
        Shell(f"touch {outside}"),
        Escalate("echo out-of-sandbox", "Needs more than the sandbox."),
        heard,
    )
    bot = Bot(lambda asked: Decision(False))
    request = write_request(responses_model, cli_bins, tmp_path, repo, "Work.")
    result = await talk(request, bot.conversation, tmp_path / "home")
    assert result.ok, result.failure
    assert [asked.command for asked in bot.asked] == ["echo out-of-sandbox"]
    assert (repo / "inside.txt").exists() and (repo / "patched.txt").exists()
    refused = responses_model.seen[3].tool_results[-1]
    assert "Read-only file system" in refused and not outside.exists()


async def test_a_reader_is_never_asked_and_cannot_write(
    cli_bins, responses_model, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path, {})
    responses_model.script(
        Shell("touch written.txt"), Escalate("touch escalated.txt"), Say("Only read.")
    )
    bot = Bot()
    request = run_request(
        "codex", cli_bins, responses_model, tmp_path, repo, "Look.", mode=Mode.READ_ONLY
    )
    result = await talk(request, bot.conversation, tmp_path / "home")
    assert result.ok and result.output.answer == "Only read."
    assert bot.asked == [] and git(repo, "status", "--porcelain") == ""
    assert "Read-only file system" in responses_model.seen[1].tool_results[-1]
    # Under `never` codex refuses the request to leave the sandbox without asking anyone.
    assert "approval policy is Never" in responses_model.seen[2].tool_results[-1]


async def test_a_talking_run_works_in_an_empty_folder_that_is_no_git_repository(
    cli_bins, responses_model, tmp_path: Path
) -> None:
    # The intake planner's world, which `exec` needed --skip-git-repo-check for.
    empty = tmp_path / "draft-empty"
    empty.mkdir()
    responses_model.script(Say("A question for the owner."))
    request = run_request("codex", cli_bins, responses_model, tmp_path, empty, "Draft this.")
    result = await talk(request, Bot().conversation, tmp_path / "home")
    assert result.ok, result.failure
    assert result.output.answer == "A question for the owner."
    assert responses_model.seen[0].cwd == str(empty)


async def test_openrouter_talks_through_the_app_server_with_its_provider_and_key(
    cli_bins, responses_model, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path, {})
    responses_model.script(Shell("sleep 1"), heard)
    bot = Bot()

    def on_step(step: str) -> None:
        if step == "ran: sleep 1":
            bot.conversation.steer("Via OpenRouter too.", "s1")

    request = replace(
        write_request(responses_model, cli_bins, tmp_path, repo, "Route it."),
        model="vendor/some-model",
    )
    result = await talk(request, bot.conversation, tmp_path / "home", "openrouter", on_step=on_step)
    assert result.ok, result.failure
    assert bot.told == [Delivered("s1"), Taken("s1")]
    for seen in responses_model.seen:
        assert seen.model == "vendor/some-model" and seen.body["reasoning"]["effort"] == "high"
        assert seen.headers["Authorization"] == f"Bearer {responses_model.key}"
    assert responses_model.seen[1].user_texts == ["Route it.", "Via OpenRouter too."]


async def test_the_users_codex_config_does_not_change_what_the_bot_sets(
    cli_bins, responses_model, tmp_path: Path
) -> None:
    # app-server has no --ignore-user-config: the bot's -c overrides and thread settings
    # must win over everything $CODEX_HOME/config.toml says about them.
    repo = make_repo(tmp_path, {})
    env = child_env(tmp_path / "home")
    config = Path(env["HOME"]) / ".codex" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(
        'model = "gpt-6-luna"\nmodel_reasoning_effort = "low"\nmodel_provider = "openai"\n'
        'sandbox_mode = "read-only"\napproval_policy = "never"\n'
    )
    responses_model.script(
        Shell("echo written > written.txt"), Escalate("echo out-of-sandbox"), heard
    )
    bot = Bot(lambda asked: Decision(False))
    request = write_request(responses_model, cli_bins, tmp_path, repo, "Work.")
    result = await run_model(
        "codex", request, limits=LIMITS, base_env=env, conversation=bot.conversation
    )
    assert result.ok, result.failure
    assert {(seen.model, seen.body["reasoning"]["effort"]) for seen in responses_model.seen} == {
        ("gpt-5.5", "high")
    }
    assert (repo / "written.txt").exists()  # workspace-write, not the file's read-only
    assert [asked.command for asked in bot.asked] == ["echo out-of-sandbox"]  # on-request
