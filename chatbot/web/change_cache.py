"""A card's change on its page, read (`git diff`) and highlighted (Pygments) once per
commit, not on every view.

A 5,000-line change costs its page about 30 ms of git and 0.4 s of highlighting. A
commit's change never changes: the same repository, base and commit give the same
files and lines, so its section (diff_section.py `change_section`, the same for
everyone who looks) is kept under that key, with the card's slug its download link
names, in a small LRU bounded in entries and in characters. A card that moves on to a
new commit (a fixer's) or a new base (a review) has a new key; the old entry ages out.
What depends on who looks or on the board's state now (an owner's comment form, the
comments) is rendered around it on each view (card_page.py).

The first view of a commit reads and renders it (the highlighting on a thread, so the
board answers other pages meanwhile); views that come before that is done wait for
the same work. A failure (a missing commit, git's time cap) is not kept: the next
view tries again.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from dataclasses import dataclass

from chatbot.board import Card
from chatbot.board.reads import BoardReads
from chatbot.web import diff_section
from chatbot.web.markup import Safe
from chatbot.web.texts import Texts
from runners.diff_files import CommitDiff

# A few cards' changes: the ones people look at now (a review, its fix).
ENTRIES = 8
# Characters of HTML and kept lines in all: a 5,000-line change takes about 1.2
# million. One larger than all may hold (thousands of lines of 2,000 characters) is
# rendered on each view, as it was before this cache.
CHARS = 16_000_000

Key = tuple[str, str | None, str, str]


@dataclass(frozen=True)
class ShownChange:
    """A card's change file by file, and its section of the card page."""

    change: CommitDiff
    html: Safe


def _size(shown: ShownChange) -> int:
    return len(shown.html) + sum(len(x.text) for f in shown.change.files for x in f.lines)


class ChangeCache:
    def __init__(self, texts: Texts, entries: int = ENTRIES, chars: int = CHARS):
        self.texts = texts
        self.entries = entries
        self.chars = chars
        self._kept: OrderedDict[Key, tuple[ShownChange, int]] = OrderedDict()
        self._chars = 0
        self._pending: dict[Key, asyncio.Future[ShownChange]] = {}
        #: Changes read and rendered (not found kept), for the tests and benches.
        self.made = 0

    async def shown(self, reads: BoardReads, card: Card) -> ShownChange | None:
        """The card's change and its section (None: no commit yet). Raises what
        `reads.change` raises (CommitViewError), and keeps nothing then."""
        found_key = reads.change_key(card)
        if found_key is None:
            return None
        key = (*found_key, card.slug)
        found = self._kept.get(key)
        if found is not None:
            self._kept.move_to_end(key)
            return found[0]
        pending = self._pending.get(key)
        if pending is None:
            pending = asyncio.ensure_future(self._make(key, reads, card))
            self._pending[key] = pending
            pending.add_done_callback(lambda _: self._pending.pop(key, None))
        # A view that goes away leaves the work to the others (and to the next view).
        return await asyncio.shield(pending)

    async def _make(self, key: Key, reads: BoardReads, card: Card) -> ShownChange:
        change = await reads.change(card)
        assert change is not None  # it has a commit
        html = await asyncio.to_thread(diff_section.change_section, change, card.slug, self.texts)
        shown = ShownChange(change, html)
        self.made += 1
        self._keep(key, shown)
        return shown

    def _keep(self, key: Key, shown: ShownChange) -> None:
        size = _size(shown)
        if size > self.chars or key in self._kept:
            return
        self._kept[key] = (shown, size)
        self._chars += size
        while len(self._kept) > self.entries or self._chars > self.chars:
            _, (_, dropped) = self._kept.popitem(last=False)
            self._chars -= dropped
