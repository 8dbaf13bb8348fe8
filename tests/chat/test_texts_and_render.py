"""The catalogues (same keys, same fields in every locale) and cutting long answers."""

from __future__ import annotations

import re
import string
import unicodedata

import pytest

from chatbot.chat import render, texts
from chatbot.chat.texts import CATALOGUES, DE, EN, say


def _fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def test_catalogues_have_the_same_keys() -> None:
    assert set(CATALOGUES) == {"en", "de"}
    assert set(EN) == set(DE)


@pytest.mark.parametrize("key", sorted(EN))
def test_each_sentence_has_the_same_fields_in_german(key: str) -> None:
    assert _fields(EN[key]) == _fields(DE[key]), key
    assert DE[key].strip(), key


def test_every_key_used_in_the_code_exists() -> None:
    """Literal keys passed to say()/text() anywhere in chatbot/chat are in the catalogue."""
    from pathlib import Path

    package = Path(texts.__file__).parent
    used: set[str] = set()
    pattern = re.compile(
        r"""(?:\bsay\(\s*(?:locale|self\.locale),|self\.text\(|\.say\(\s*[\w.]+,)\s*"([a-z_]+)\""""
    )
    for path in package.glob("*.py"):
        used |= set(pattern.findall(path.read_text(encoding="utf-8")))
    assert used, "the pattern found nothing"
    assert used <= set(EN), used - set(EN)


def test_german_is_german() -> None:
    assert say("de", "status_empty") == "Das Board ist leer."
    assert say("en", "status_empty") == "The board is empty."
    # An unknown locale falls back to English rather than failing.
    assert say("fr", "status_empty") == "The board is empty."


def test_short_text_is_untouched() -> None:
    assert render.clip("a\nb", "en", 100) == "a\nb"


def test_long_text_is_cut_at_a_line_and_counts_what_is_left_out() -> None:
    lines = [f"card-{n:03d}" for n in range(500)]
    text = "\n".join(lines)
    clipped = render.clip(text, "en", 300)
    assert len(clipped) <= 300
    kept = clipped.split("\n")[:-1]
    assert kept == lines[: len(kept)]
    assert clipped.endswith(f"… {500 - len(kept)} more lines left out.")
    assert "weitere Zeilen ausgelassen" in render.clip(text, "de", 300)


@pytest.mark.parametrize("limit", range(40, 110))
def test_one_huge_line_is_cut_between_characters(limit: int) -> None:
    # Combining accents, flags and ZWJ sequences: a cut must not separate them.
    line = "e\u0301" * 10 + "👩\u200d💻" * 10 + "1\ufe0f\u20e3" * 10 + "🇩🇪🇫🇷" * 5 + "👍🏽" * 10
    clipped = render.clip(line, "en", limit)
    assert len(clipped) <= limit
    head = clipped.split("…")[0]
    assert line.startswith(head)
    after = line[len(head)]
    assert not unicodedata.combining(after)
    assert after not in "\u200d\ufe0f\u20e3🏽" and not head.endswith("\u200d")
    regional = sum(1 for c in head if "\U0001f1e6" <= c <= "\U0001f1ff")
    assert regional % 2 == 0  # no flag cut in half
    assert "more characters left out" in clipped


def test_durations() -> None:
    assert render.duration(5) == "5s"
    assert render.duration(125) == "2m 05s"
    assert render.duration(3 * 3600 + 60) == "3h 01m"


def test_keys_built_from_tables_exist() -> None:
    from chatbot.chat.commands import COMMANDS, Access, Problem
    from chatbot.chat.reactions import REACTIONS
    from chatbot.store.jobs import JobState

    needed = {c.help_key for c in COMMANDS} | {r.help_key for r in REACTIONS}
    needed |= {f"access_{a.value}" for a in Access}
    needed |= {f"problem_{p.value}" for p in Problem}
    needed |= {f"job_{s.value}" for s in JobState}
    needed |= {f"request_state_{s}" for s in ("pending", "accepted", "declined")}
    assert needed <= set(EN), needed - set(EN)


def test_cut_never_splits_what_people_see_as_one_character() -> None:
    from chatbot.notify.format import cut, prefix

    pieces = ["e\u0301", "👩\u200d💻", "1\ufe0f\u20e3", "🇩🇪", "🇫🇷", "👍🏽", "a", "ß"]
    line = "".join(pieces * 3)
    bounds = {0}
    for piece in pieces * 3:
        bounds.add(max(bounds) + len(piece))
    for limit in range(len(line) + 1):
        head = prefix(line, limit)
        assert len(head) in bounds, (limit, head)
        assert len(head) <= limit
        # The notices' cutter is the same one: it never splits them either.
        shortened = cut(line, limit, "…")
        assert len(shortened.removesuffix("…")) in bounds


def test_runs_names_the_host_of_a_running_job() -> None:
    from chatbot.chat import render
    from chatbot.store.jobs import Job, JobState

    def job(job_id: int, state: JobState, host: str | None) -> Job:
        return Job(
            job_id, job_id, "builder", "light", state, None, {}, 1, "w", None, None,
            100.0, 100.0 if state is JobState.RUNNING else None, None, None, None, host=host,
        )  # fmt: skip

    jobs = [job(1, JobState.RUNNING, "build-2"), job(2, JobState.QUEUED, None)]
    text = render.runs(jobs, {1: "alpha", 2: "beta"}, "en", now=160.0)
    running, queued = text.splitlines()[1:]
    assert "alpha" in running and running.endswith(", on build-2")
    assert "beta" in queued and " on " not in queued
    assert render.runs(jobs, {1: "alpha"}, "de", now=160.0).splitlines()[1].endswith("auf build-2")
