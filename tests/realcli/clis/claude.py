"""Claude Code in the real-CLI tests: the Anthropic Messages API, its permission mode."""

from tests.realcli.anthropic_messages import MessagesModel
from tests.realcli.providers import TestedCli

CLI = TestedCli(
    runtime="claude",
    provider=MessagesModel,
    key="claude-loopback-key-9a7e",
    models=("claude-sonnet-4-5",),
    env={"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"},
    # A read-only run is not offered the write tools; its Bash writes are denied.
    write_tools=frozenset({"Write", "Edit", "NotebookEdit"}),
    refused_write="No such tool available: Write",
    refused_shell="denied",
    refused_with_grants=("denied",),
    unknown_session="No conversation found",
    turn_limit="Reached maximum number of turns",
    reports_model=True,
)
