"""The reaction table: which emoji on a bot message does what, as one piece of data.

`/help` lists this table; the service looks reactions up here and nowhere else.
Clients differ in how they spell an emoji (with or without the U+FE0F variation
selector, with a skin-tone modifier), so keys are compared in a normal form.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from chatbot.board import Card
from chatbot.domain.phases import Phase
from chatbot.domain.transitions import Action, Stage

VARIATION_SELECTOR = "\ufe0f"
_SKIN_TONES = {chr(c) for c in range(0x1F3FB, 0x1F400)}
KEYCAP = "\u20e3"


class Effect(StrEnum):
    ACCEPT = "accept"  # a request, a routing recommendation, a split offer
    DECLINE = "decline"  # a request, a routing recommendation
    ACT = "act"  # an owner action on the message's card
    OPTION = "option"  # choose a numbered option of the message's question


@dataclass(frozen=True)
class Reaction:
    #: As shown in /help (fully qualified, with U+FE0F where Unicode has it).
    shown: str
    effect: Effect
    help_key: str
    action: Action | None = None
    #: 1-based option number for Effect.OPTION.
    option: int | None = None

    @property
    def key(self) -> str:
        return normalise(self.shown)


def normalise(key: str) -> str:
    """One spelling per emoji: no variation selector, no skin tone, no spaces."""
    return "".join(c for c in key.strip() if c != VARIATION_SELECTOR and c not in _SKIN_TONES)


REACTIONS: tuple[Reaction, ...] = (
    Reaction("👍", Effect.ACCEPT, "react_accept"),
    Reaction("👎", Effect.DECLINE, "react_decline"),
    Reaction("🔁", Effect.ACT, "react_retry", Action.RETRY),
    Reaction("✂️", Effect.ACT, "react_split", Action.SPLIT),
    Reaction("🗄️", Effect.ACT, "react_archive", Action.ARCHIVE),
    *(
        Reaction(f"{n}{VARIATION_SELECTOR}{KEYCAP}", Effect.OPTION, "react_option", option=n)
        for n in range(1, 5)
    ),
)

# Replies that decide a request or a split plan; the first word counts ("yes please").
YES = frozenset({"yes", "y", "ok", "okay", "accept", "ja", "j", "👍"})
NO = frozenset({"no", "n", "decline", "nein", "👎"})


def yes_or_no(text: str) -> bool | None:
    words = text.strip().split()
    if not words:
        return None
    first = normalise(words[0].strip(".,!?;:").lower())
    if first in YES:
        return True
    if first in NO:
        return False
    return None


_BY_KEY: dict[str, Reaction] = {r.key: r for r in REACTIONS}


def lookup(key: str) -> Reaction | None:
    return _BY_KEY.get(normalise(key))


def help_rows() -> list[tuple[str, str]]:
    """(emoji shown, help key) once per help key: the four option keys share one row."""
    rows: dict[str, list[str]] = {}
    for reaction in REACTIONS:
        rows.setdefault(reaction.help_key, []).append(reaction.shown)
    return [(_span(shown), key) for key, shown in rows.items()]


def _span(shown: list[str]) -> str:
    return shown[0] if len(shown) == 1 else f"{shown[0]}–{shown[-1]}"


def recommended_action(recommendation: str, card: Card) -> Action | None:
    """The owner action that applies an inspector's routing recommendation, if one does.

    Only recommendations that map onto an existing owner action are applied; the
    lane of a `building_<lane>` recommendation is left to the operator, which
    decides it on START anyway. Anything else is for the owner to do by command.
    """
    if recommendation == "archived":
        return Action.ARCHIVE
    if recommendation in ("research_requested", "research_running"):
        return Action.RESEARCH
    if recommendation == "planned" or recommendation.startswith("building_"):
        return Action.START
    if (
        recommendation == "reviewing"
        and card.phase is Phase.FAILED
        and card.failure_stage == Stage.REVIEW.value
    ):
        return Action.RETRY
    return None


def pending_recommendation(card: Card) -> str | None:
    """The inspector's routing recommendation still waiting for the owner, if any."""
    inspection = card.data.inspection
    if inspection is None or inspection.get("pending") is not True:
        return None
    return inspection.get("recommended_action") or None


def split_offered(card: Card) -> bool:
    """The builder hit its limit with no ladder left: the owner is offered /split."""
    return card.phase is Phase.PLANNING_WITH_FEEDBACK and card.data.limit_reached
