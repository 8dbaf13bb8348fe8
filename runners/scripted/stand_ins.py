"""Every scripted stand-in, by the CLI program it imitates (`Cli.command` of its runtime)."""

from collections.abc import Callable, Mapping

from runners.scripted import claude, codex

STAND_INS: Mapping[str, Callable[[], None]] = {
    module.CLI: module.main for module in (codex, claude)
}
