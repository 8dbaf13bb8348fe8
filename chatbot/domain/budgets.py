"""Budgets as data: what model runs may cost per day and per card, and where a scope stands.

The board sums what was spent (telemetry) and decides with these; the configuration
fills them in; `/allow` raises a budget by its own size once more (an allowance).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Budgets:
    """[bot] budget_usd_per_day and [lanes.<lane>] budget_usd_per_card (by lane)."""

    per_day_usd: float | None = None
    per_card_usd: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class BudgetState:
    scope: str  # "day" or "card"
    spent: float
    budget: float  # as configured
    allowances: int
    #: The configuration key that sets it, for "raise it in the configuration".
    key: str

    @property
    def limit(self) -> float:
        return self.budget * (1 + self.allowances)

    @property
    def reached(self) -> bool:
        # Spend is a sum of floats: ten runs of $0.10 add up to 0.9999999999999999,
        # which must reach a $1.00 budget. Compared to a millionth of a dollar.
        return round(self.spent, 6) >= round(self.limit, 6)

    def as_dict(self) -> dict[str, Any]:
        return {
            "scope": self.scope,
            "spent": round(self.spent, 6),
            "limit": round(self.limit, 6),
            "budget": self.budget,
            "allowances": self.allowances,
            "key": self.key,
        }
