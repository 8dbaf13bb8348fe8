"""Scripted stand-ins of `codex` and `claude` (stdlib only): they parse their command
lines like the real CLIs and answer from a scenario file instead of a model.

The console demo runs on them (no account needed), and the tests use them for what
a real CLI cannot be made to do on demand: hang, trickle, print damaged or huge
output, exit with a chosen status, leave a helper process behind. The scenario
format is in tests/bin/README.md. Any behaviour where they disagree with the real
program is a bug here.

A runtime needs no stand-in (its real CLI runs in tests/realcli). One that gets one
adds its module here (with `CLI`, the command it imitates, and `main()`), the module
to stand_ins.py, and its console script `intent-board-scripted-<command>` to
pyproject.toml (the demo and `chatbot init` find stand-ins by that name).
"""
