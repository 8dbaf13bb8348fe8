"""`chatbot init --xmpp | --matrix`: a short configuration with only what one network needs.

The full example (`chatbot init DIR`) documents every key; a new user wants the few
that must be filled in. So: [bot], one chat section, one runtime and one lane, every
role on that runtime by default. No deploy step, no web board, nothing on localhost:
the full example shows how to add them.
"""

from __future__ import annotations

import json

NETWORKS = ("xmpp", "matrix")

PLACEHOLDER_OWNERS = {"xmpp": "owner@example.org", "matrix": "@owner:example.org"}
WHO = {
    "xmpp": "bare JIDs (name@server); nicknames never count",
    "matrix": "Matrix user ids (@name:server); display names never count",
}

_HEAD = """\
# The intent-board bot on {title}: only the keys it needs. Every other key (budgets,
# more lanes, a deploy step, the web board) is in the full example, explained:
# `chatbot init DIR` without --{network} writes it. Relative paths are relative to this
# file; each *_file key names a file holding one secret, never the secret itself.
# Check with: chatbot check --config bot.toml [--no-connect]

[bot]
# The only identities that may decide: {who}.
owners = [{owner}]
# The git repository whose docs/intent/*.md are the cards (a folder, or a git address).
repo = {repo}
database = "var/board.sqlite3"
workspaces = "var/workspaces"
"""

_XMPP = """
[xmpp]
jid = "board@example.org"
password_file = "secrets/xmpp-password"
# Rooms must show every occupant's real JID (non-anonymous); direct chats work too.
rooms = ["board@conference.example.org"]
# The server is found from the JID's domain; set host only when it is elsewhere.
# host = "xmpp.example.org"
"""

_MATRIX = """
[matrix]
homeserver = "https://matrix.example.org"
user_id = "@board:example.org"
password_file = "secrets/matrix-password"
rooms = ["#board:example.org"]
# The passphrase of the end-to-end encryption keys (init made it): back it up.
store_key_file = "secrets/matrix-store-key"
"""

_AGENTS = """
# The agent CLI every role runs on: a name on PATH, or a path.
[runtimes.codex]
binary = {binary}
pass_env = ["CODEX_HOME"]       # where its login lives

# The one builder lane the operator may choose for a card.
[lanes.light]
runtime = "codex"
model = "gpt-5-codex"
reasoning_effort = "medium"
iteration_limit = 10            # agent turns per builder run, 5 to 40
concurrency = 1                 # builder runs at the same time
"""


def short_config(network: str, *, owner: str | None, repo: str, binary: str) -> str:
    """The text of the short configuration for `network` ("xmpp" or "matrix")."""
    head = _HEAD.format(
        title="XMPP" if network == "xmpp" else "Matrix",
        network=network,
        who=WHO[network],
        owner=toml_string(owner or PLACEHOLDER_OWNERS[network]),
        repo=toml_string(repo),
    )
    section = _XMPP if network == "xmpp" else _MATRIX
    return head + section + _AGENTS.format(binary=toml_string(binary))


def toml_string(value: str) -> str:
    """`value` as a TOML basic string."""
    # A JSON string is a TOML basic string (the same escapes).
    return json.dumps(value, ensure_ascii=False)
