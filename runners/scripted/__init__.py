"""Scripted stand-ins of `codex` and `claude` (stdlib only): they parse their command
lines like the real CLIs and answer from a scenario file instead of a model.

The console demo runs on them (no account needed), and the tests use them for what
a real CLI cannot be made to do on demand: hang, trickle, print damaged or huge
output, exit with a chosen status, leave a helper process behind. The scenario
format is in tests/bin/README.md. Any behaviour where they disagree with the real
program is a bug here.
"""
