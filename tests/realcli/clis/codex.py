"""Codex CLI in the real-CLI tests: the OpenAI Responses API, its read-only sandbox."""

from tests.realcli.openai_responses import ResponsesModel
from tests.realcli.providers import TestedCli

CLI = TestedCli(
    runtime="codex",
    provider=ResponsesModel,
    key="codex-loopback-key-5f1c",
    # Names the pinned codex knows (it offers its shell tool as `exec_command`).
    models=("gpt-5.5", "gpt-6-luna"),
    effort="medium",
    # Its sandbox runs every command; the kernel refuses the writes.
    refused_write="Read-only file system",
    refused_shell="Read-only file system",
    refused_with_grants=("Read-only file system",),
    unknown_session="no rollout found for thread id",
    processes=2,
)
