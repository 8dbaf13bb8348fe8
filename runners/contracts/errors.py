"""The one exception every role contract raises.

A caller only ever needs `except ContractError`: whatever was wrong with a model
answer, nothing of it is applied, and the message says which field broke which
rule so the failure detail posted to chat is actionable.
"""

from __future__ import annotations


class ContractError(ValueError):
    """A model answer broke its role contract; the whole answer is rejected."""

    def __init__(self, field: str, rule: str) -> None:
        self.field = field
        self.rule = rule
        super().__init__(f"{field}: {rule}")
