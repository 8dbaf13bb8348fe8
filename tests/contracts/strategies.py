"""Hypothesis strategies: valid operator decisions, built to satisfy every rule by construction."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from tests.contracts.helpers import PARENT, TEST_ALLOWED

# Marker text inside a value would (rightly) make the answer ambiguous; valid
# decisions therefore never contain "===".
_PLAIN = st.characters(blacklist_categories=("Cs",))
_ONE_LINE = st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp"))

texts = st.text(_PLAIN, min_size=1, max_size=40).filter(lambda s: s.strip() and "===" not in s)
titles = st.text(_ONE_LINE, min_size=1, max_size=40).filter(lambda s: s.strip() and "===" not in s)
slugs = st.from_regex(r"[a-z0-9][a-z0-9-]{0,20}", fullmatch=True).filter(lambda s: s != PARENT)
efforts = st.sampled_from(["", "low", "medium", "high"])


def title_key(title: str) -> str:
    return " ".join(title.split()).casefold()


@st.composite
def profiles(draw: st.DrawFn) -> dict[str, Any]:
    lane = TEST_ALLOWED.lanes[draw(st.sampled_from(sorted(TEST_ALLOWED.lanes)))]
    effort: str | None = lane.reasoning_effort
    if effort == "":
        effort = draw(st.sampled_from([None, ""]))
    return {
        "recommended_lane": lane.lane,
        "runtime": lane.runtime,
        "model": lane.model,
        "reasoning_effort": effort,
        "escalation": _ladder_for(draw, lane.runtime),
    }


@st.composite
def split_decisions(draw: st.DrawFn) -> dict[str, Any]:
    count = draw(st.integers(1, 10))
    names = draw(st.lists(slugs, min_size=count, max_size=count, unique=True))
    heads = draw(st.lists(titles, min_size=count, max_size=count, unique_by=title_key))
    children: list[dict[str, Any]] = []
    ancestors: list[set[int]] = []
    for index in range(count):
        # Dependencies only on earlier children: acyclic by construction.
        deps = draw(st.sets(st.integers(0, index - 1), max_size=3)) if index else set()
        closure = set(deps).union(*(ancestors[d] for d in deps)) if deps else set()
        ancestors.append(closure)
        wave = max((children[d]["wave"] for d in deps), default=1) + draw(st.integers(0, 2))
        scope = [f"area-{index}/**"]
        if closure and draw(st.booleans()):
            # Writing inside an ancestor's area is allowed: the two are ordered. The
            # file name is this child's own, so unordered siblings stay disjoint.
            scope.append(f"area-{draw(st.sampled_from(sorted(closure)))}/from-{index}.txt")
        profile = draw(profiles())
        children.append(
            {
                "slug": names[index],
                "title": heads[index],
                "wave": wave,
                "blocked_by": [names[d] for d in draw(st.permutations(sorted(deps)))],
                **{k: v for k, v in profile.items() if k != "escalation"},
                "write_scope": scope,
                "acceptance_criteria": draw(st.lists(texts, min_size=1, max_size=3)),
                "intent_markdown": draw(texts),
                "escalation": profile["escalation"],
            }
        )
    order = draw(st.permutations(range(count)))
    return {
        "schema_version": 1,
        "decision": "split",
        "reason": draw(texts),
        "recommended_lane": None,
        "runtime": None,
        "model": None,
        "reasoning_effort": None,
        "human_action": None,
        "escalation": [],
        "children": [children[i] for i in order],
    }


def _ladder_for(draw: st.DrawFn, runtime: str) -> list[dict[str, Any]]:
    step = st.fixed_dictionaries(
        {
            "model": st.sampled_from(TEST_ALLOWED.escalation_pool(runtime)),
            "reasoning_effort": efforts,
            "iteration_limit": st.integers(5, 40),
        }
    )
    return draw(st.lists(step, max_size=2))


@st.composite
def direct_decisions(draw: st.DrawFn) -> dict[str, Any]:
    profile = draw(profiles())
    return {
        "schema_version": 1,
        "decision": "direct_builder",
        "reason": draw(texts),
        "recommended_lane": profile["recommended_lane"],
        "runtime": profile["runtime"],
        "model": profile["model"],
        "reasoning_effort": profile["reasoning_effort"],
        "human_action": None,
        "escalation": profile["escalation"],
        "children": [],
    }


@st.composite
def needs_human_decisions(draw: st.DrawFn) -> dict[str, Any]:
    return {
        "schema_version": 1,
        "decision": "needs_human",
        "reason": draw(texts),
        "recommended_lane": None,
        "runtime": None,
        "model": None,
        "reasoning_effort": None,
        "human_action": draw(texts),
        "escalation": [],
        "children": [],
    }


decisions = st.one_of(direct_decisions(), split_decisions(), needs_human_decisions())
