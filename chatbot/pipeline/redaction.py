"""No secret leaves in text: what an agent returns is searched for the values of the
bot's secret files (chat passwords and tokens, runtime keys, the web and database
secrets) before the bot posts, stores or commits any of it.

An agent that could read a secret (a lane without a sandbox, a CLI's own login) may put
it into its report, commit message, question or an approval it asks for. Text shows
`[redacted: <key>]` in its place; a commit whose change holds one is refused
(`building.py`). Values shorter than `MIN_CHARS` are not searched: they would match
ordinary words, and a secret that short is no secret (`chatbot check` names it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from chatbot.config import Config
from runners.runtimes import RunResult

MIN_CHARS = 6


@dataclass(frozen=True, slots=True)
class Redactor:
    #: The configuration key that names each secret file -> the secret's value.
    values: Mapping[str, str]

    def found(self, text: str) -> list[str]:
        """The keys whose secret value `text` holds."""
        return [key for key, value in self.values.items() if value in text]

    def redact(self, text: str) -> str:
        # Longest first, so that a secret holding another is replaced whole.
        for key, value in sorted(self.values.items(), key=lambda item: -len(item[1])):
            if value in text:
                text = text.replace(value, f"[redacted: {key}]")
        return text

    def result(self, result: RunResult) -> RunResult:
        """A run's answer, failure and stderr with every secret value replaced."""
        if not self.values:
            return result
        output = replace(result.output, answer=self.redact(result.output.answer))
        return replace(
            result,
            output=output,
            failure=self.redact(result.failure) if result.failure else result.failure,
            stderr_tail=self.redact(result.stderr_tail),
        )


def of(config: Config) -> Redactor:
    """The secrets the configuration names, read now (a rotated file counts at once)."""
    values = config.secret_values().items()
    return Redactor({key: value for key, value in values if len(value) >= MIN_CHARS})
