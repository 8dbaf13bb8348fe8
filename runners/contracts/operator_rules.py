"""Operator rules that span fields or need configuration.

Checked in a fixed order (top level, then every child's identity, then each
child's profile, then the graph, then write scopes) so that one defect yields
one predictable complaint naming the field that carries it.
"""

from __future__ import annotations

from collections.abc import Sequence

from runners.contracts.errors import ContractError
from runners.contracts.operator_schema import LadderStep, OperatorChild, OperatorDecision
from runners.contracts.scopes import scopes_overlap
from runners.contracts.validation import shown
from runners.profiles import AllowedProfiles


def check_decision(decision: OperatorDecision, allowed: AllowedProfiles, parent_slug: str) -> None:
    if decision.decision == "direct_builder":
        _check_profile(
            "",
            decision.recommended_lane,
            decision.runtime,
            decision.model,
            decision.reasoning_effort,
            decision.escalation,
            allowed,
        )
        _require_null("human_action", decision.human_action, "direct_builder")
        if decision.children:
            raise ContractError("children", "must be empty for direct_builder")
        return

    for name in ("recommended_lane", "runtime", "model", "reasoning_effort"):
        # getattr: the four fields the loop names, which must be null here
        _require_null(name, getattr(decision, name), decision.decision)
    if decision.decision == "needs_human":
        if decision.human_action is None or not decision.human_action.strip():
            raise ContractError("human_action", "needs_human must name what a human has to decide")
        if decision.escalation:
            raise ContractError("escalation", "must be empty for needs_human")
        if decision.children:
            raise ContractError("children", "must be empty for needs_human")
        return

    _require_null("human_action", decision.human_action, "split")
    if decision.escalation:
        raise ContractError("escalation", "must be empty for split (each child has its own)")
    if not decision.children:
        raise ContractError("children", "split needs at least one child")
    _check_children(decision.children, allowed, parent_slug)


def _require_null(field: str, value: object, decision: str) -> None:
    if value is not None:
        raise ContractError(field, f"must be null for {decision}")


def _check_profile(
    prefix: str,
    lane_name: str | None,
    runtime: str | None,
    model: str | None,
    effort: str | None,
    ladder: Sequence[LadderStep],
    allowed: AllowedProfiles,
) -> None:
    lanes = ", ".join(sorted(allowed.lanes)) or "none configured"
    if lane_name is None:
        raise ContractError(f"{prefix}recommended_lane", f"required, one of: {lanes}")
    lane = allowed.lane(lane_name)
    if lane is None:
        raise ContractError(
            f"{prefix}recommended_lane", f"{shown(lane_name)} is not one of: {lanes}"
        )
    if runtime != lane.runtime:
        raise ContractError(f"{prefix}runtime", f"lane {lane_name!r} runs on {lane.runtime!r}")
    if model != lane.model:
        raise ContractError(f"{prefix}model", f"lane {lane_name!r} uses model {lane.model!r}")
    # A default effort is configured as "" and shown to the model as null; both
    # spellings mean the same, anything else must match exactly.
    expected = lane.reasoning_effort
    if not (effort == expected or (expected == "" and effort is None)):
        configured = repr(expected) if expected else "null"
        raise ContractError(
            f"{prefix}reasoning_effort", f"lane {lane_name!r} uses reasoning effort {configured}"
        )
    pool = allowed.escalation_pool(lane.runtime)
    for index, step in enumerate(ladder):
        if step.model not in pool:
            choices = ", ".join(pool) or "none configured"
            raise ContractError(
                f"{prefix}escalation[{index}].model",
                f"{step.model!r} is not an escalation model for {lane.runtime!r}: {choices}",
            )


def _check_children(
    children: Sequence[OperatorChild], allowed: AllowedProfiles, parent_slug: str
) -> None:
    index_of: dict[str, int] = {}
    titles: dict[str, int] = {}
    for index, child in enumerate(children):
        where = f"children[{index}]"
        if child.slug == parent_slug:
            raise ContractError(f"{where}.slug", "must differ from the parent's slug")
        if child.slug in index_of:
            raise ContractError(
                f"{where}.slug",
                f"{child.slug!r} is already used by children[{index_of[child.slug]}]",
            )
        index_of[child.slug] = index
        title_key = " ".join(child.title.split()).casefold()
        if title_key in titles:
            raise ContractError(f"{where}.title", f"same title as children[{titles[title_key]}]")
        titles[title_key] = index

    for index, child in enumerate(children):
        _check_profile(
            f"children[{index}].",
            child.recommended_lane,
            child.runtime,
            child.model,
            child.reasoning_effort,
            child.escalation,
            allowed,
        )

    _check_graph(children, index_of)
    _check_scopes(children, _ancestors(children, index_of))


def _check_graph(children: Sequence[OperatorChild], index_of: dict[str, int]) -> None:
    for index, child in enumerate(children):
        seen: set[str] = set()
        for position, dependency in enumerate(child.blocked_by):
            where = f"children[{index}].blocked_by[{position}]"
            if dependency == child.slug:
                raise ContractError(where, "a child cannot be blocked by itself")
            if dependency not in index_of:
                raise ContractError(where, f"{dependency!r} is not a sibling in this answer")
            if dependency in seen:
                raise ContractError(where, f"{dependency!r} is listed twice")
            seen.add(dependency)

    cycle = _find_cycle(children, index_of)
    if cycle is not None:
        first = index_of[cycle[0]]
        raise ContractError(
            f"children[{first}].blocked_by", "dependency cycle: " + " -> ".join(cycle)
        )

    for index, child in enumerate(children):
        for dependency in child.blocked_by:
            dependency_wave = children[index_of[dependency]].wave
            if child.wave < dependency_wave:
                raise ContractError(
                    f"children[{index}].wave",
                    f"wave {child.wave} is earlier than dependency {dependency!r} "
                    f"(wave {dependency_wave})",
                )


def _find_cycle(children: Sequence[OperatorChild], index_of: dict[str, int]) -> list[str] | None:
    # Colour-marking depth-first search; at most ten nodes, so recursion is fine.
    state: dict[str, int] = {}  # 1 = on the current path, 2 = finished
    path: list[str] = []

    def visit(slug: str) -> list[str] | None:
        state[slug] = 1
        path.append(slug)
        for dependency in children[index_of[slug]].blocked_by:
            if state.get(dependency) == 1:
                return path[path.index(dependency) :] + [dependency]
            if dependency not in state:
                found = visit(dependency)
                if found is not None:
                    return found
        path.pop()
        state[slug] = 2
        return None

    for child in children:
        if child.slug not in state:
            found = visit(child.slug)
            if found is not None:
                return found
    return None


def _ancestors(children: Sequence[OperatorChild], index_of: dict[str, int]) -> list[set[int]]:
    """For each child, every sibling it transitively waits for (the graph is acyclic)."""
    result: list[set[int] | None] = [None] * len(children)

    def collect(index: int) -> set[int]:
        known = result[index]
        if known is not None:
            return known
        found: set[int] = set()
        for dependency in children[index].blocked_by:
            parent = index_of[dependency]
            found.add(parent)
            found |= collect(parent)
        result[index] = found
        return found

    return [collect(index) for index in range(len(children))]


def _check_scopes(children: Sequence[OperatorChild], ancestors: list[set[int]]) -> None:
    for later in range(len(children)):
        for earlier in range(later):
            if earlier in ancestors[later] or later in ancestors[earlier]:
                continue
            for mine in children[later].write_scope:
                for theirs in children[earlier].write_scope:
                    if scopes_overlap(mine, theirs):
                        raise ContractError(
                            f"children[{later}].write_scope",
                            f"{mine!r} overlaps {theirs!r} of children[{earlier}] "
                            f"({children[earlier].slug!r}); one must be blocked_by the other",
                        )
