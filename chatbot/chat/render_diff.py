"""/diff as a chat answer: a commit's stat and the first lines of its patch."""

from __future__ import annotations

import re

from chatbot.chat.texts import say
from chatbot.domain.counted import counted
from chatbot.notify.format import cut
from runners.commit_view import CommitDiff

# A diff is cut to stay readable on a phone and inside one message (MAX_CHARS).
DIFF_STAT_CHARS = 900
DIFF_PATCH_CHARS = 2200


def diff(slug: str, shown: CommitDiff, locale: str) -> str:
    """/diff: the commit's stat and the first lines of its patch, each in a code block
    that is closed however the text was cut."""
    lines = [say(locale, "diff_head", slug=slug, commit=shown.commit[:12])]
    lines.append(_code(cut(shown.stat, DIFF_STAT_CHARS, "\n…"), ""))
    if shown.patch:
        patch = cut(shown.patch, DIFF_PATCH_CHARS)
        lines.append(_code(patch, "diff"))
        cut_here = shown.patch.count("\n") - patch.count("\n")  # lines the char cap took
        left = None if shown.lines_left is None else shown.lines_left + cut_here
        if left is None:
            lines.append(say(locale, "diff_more_unknown", commit=shown.commit[:12]))
        elif left > 0:
            more = counted(left, "more line", locale)
            lines.append(say(locale, "diff_more", count=more, commit=shown.commit[:12]))
    return "\n".join(lines)


def _code(text: str, language: str) -> str:
    # A fence longer than any run of backticks inside, so the diff cannot close it.
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text}\n{fence}"
