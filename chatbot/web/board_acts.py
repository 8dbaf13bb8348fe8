"""A signed-in owner's buttons on the board page, on the cards that wait for them.

Live events push the same card markup to every open page, so a card cannot carry a
session's CSRF token. The page of a signed-in owner holds one form instead (`#owner-act`,
outside the live part: its token and `back=board`), and each waiting card's buttons
name it with `form=` and say what with `formaction`, `name` and `value`. The buttons are
the card page's own for the card's state (action_forms); what needs words (an answer
in words, a reason, a steer) is a link to the card's page. A reader's page has no such
form: the stylesheet hides the buttons, a button whose form is missing sends nothing,
and the server refuses a form without a session anyway (owners.py). The owner's part
also holds a small "New card" form: words for /draft, posted to /draft with the token.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from chatbot.board.web_reads import BoardCard
from chatbot.board.web_sessions import Said, WebSession
from chatbot.domain.checks import SKIP_FLAG
from chatbot.domain.phases import Kind, Phase
from chatbot.domain.transitions import Action, Stage, allowed_actions
from chatbot.web.action_forms import MOVES, said_box
from chatbot.web.markup import Safe, esc, tag
from chatbot.web.texts import Texts

FORM = "owner-act"
# Where an action's answer leads back to, by the form's `back` field; anything else
# goes back to the card's page.
BACK = {"board": "/"}
NOTHING = Safe("")
# The most words /draft takes (chat's bound on a command's text, commands.MAX_TEXT_CHARS);
# the server refuses more with chat's usage answer anyway.
DRAFT_CHARS = 4000


@lru_cache(maxsize=256)
def _allowed(phase: Phase, kind: Kind, failure_stage: str | None) -> frozenset[Action]:
    # The table's answer depends on these three alone: a page of 200 waiting cards
    # asks it for a handful of distinct states, not 200 walks of the table.
    return frozenset(allowed_actions(phase, kind, failure_stage))


class CardActs:
    """The buttons of one card on the board; nothing for a card that does not wait."""

    def __init__(self, t: Texts):
        self._labels = {action: esc(t(f"act_{action.value}")) for action in MOVES}
        self._answer_words = esc(t("act_answer_words"))
        self._steer = esc(t("act_steer_page"))
        self._retry_skip = esc(t("act_retry_skip_checks"))

    def __call__(self, card: BoardCard) -> str:
        if not card.waits:
            return ""
        slug = esc(card.slug)
        to = f'form="{FORM}" formaction="/card/{slug}/act'
        allowed = _allowed(card.phase, card.kind, card.failure_stage)
        parts = []
        css = "acts"
        if card.question is not None and Action.ANSWER in allowed:
            # A button sends one name and value (the action): the option rides in the
            # address, the CSRF token in the shared form.
            for number, option in enumerate(card.options, start=1):
                parts.append(
                    f'<button class="opt" {to}?option={number}" name="action" value="answer">'
                    f"{esc(option)}</button>"
                )
            if card.options:
                css += " answerable"
            parts.append(f'<a href="/card/{slug}#act">{self._answer_words}</a>')
        parts.extend(
            f'<button {to}" name="action" value="{action.value}">{self._labels[action]}</button>'
            for action in MOVES
            if action in allowed
        )
        if Action.RETRY in allowed and card.failure_stage == Stage.CHECKS.value:
            # The owner's choice past the checks, once; its flag rides in the address.
            parts.append(
                f'<button {to}?checks={SKIP_FLAG}" name="action" value="retry">'
                f"{self._retry_skip}</button>"
            )
        if card.phase is Phase.INTERRUPTED:
            parts.append(f'<a href="/card/{slug}#act">{self._steer}</a>')
        return f'<div class="{css}">{"".join(parts)}</div>'


def owner_bar(
    session: WebSession | None, said: Sequence[Said], t: Texts, inbox: Safe = NOTHING
) -> Safe | None:
    """The signed-in owner's part of the board page: who, the one form every card's
    buttons post, what the last action from the board answered, and the owner's inbox
    (inbox_section.py). None: a reader."""
    if session is None:
        return None
    return tag(
        '<section id="owner"><form id="{form}" method="post" action="/" hidden>'
        '<input type="hidden" name="csrf" value="{csrf}">'
        '<input type="hidden" name="back" value="board"></form>'
        '<p class="who">{who}</p>{said}{inbox}{new}</section>',
        form=FORM,
        csrf=session.csrf,
        who=t("signed_in_as", identity=session.identity),
        said=said_box(said, t),
        inbox=inbox,
        new=new_card(session.csrf, t),
    )


def new_card(csrf: str, t: Texts) -> Safe:
    """A new card from words: `/draft <text>` (chat/web_acts.py), whose planner asks
    what it needs to know and ends in a planned card. Closed until opened: small."""
    return tag(
        '<details id="new-card"><summary>{h}</summary>'
        '<form method="post" action="/draft" class="act">'
        '<input type="hidden" name="csrf" value="{csrf}">'
        '<label>{l} <textarea name="text" rows="3" maxlength="{max}" required></textarea>'
        '</label><button type="submit">{b}</button></form></details>',
        h=t("new_card"),
        csrf=csrf,
        l=t("new_card_text"),
        max=DRAFT_CHARS,
        b=t("act_draft"),
    )
