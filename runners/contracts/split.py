"""Planner, split mode: a card stuck at the iteration limit becomes 1 to 10 children."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field

from runners.contracts.draft import parse_slug_document
from runners.contracts.errors import ContractError
from runners.contracts.markers import SPLIT_CHILD, SPLIT_REPORT, normalise_answer, single_block
from runners.contracts.validation import STRICT, NonBlank, Slug, build

MAX_SPLIT_CHILDREN = 10


class SplitChild(BaseModel):
    """The wrapper writes `body` to docs/intent/<slug>.md exactly as given."""

    model_config = STRICT

    slug: Slug
    body: NonBlank


class SplitProposal(BaseModel):
    model_config = STRICT

    children: Annotated[tuple[SplitChild, ...], Field(min_length=1, max_length=MAX_SPLIT_CHILDREN)]


def parse_split(answer: str, parent_slug: str) -> SplitProposal:
    text = normalise_answer(answer)
    report = single_block(text, SPLIT_REPORT).content
    children: list[SplitChild] = []
    seen: dict[str, int] = {}
    position = 0
    while True:
        begin = report.find(SPLIT_CHILD.start, position)
        stray_end = report.find(SPLIT_CHILD.end, position)
        if begin == -1:
            if stray_end != -1:
                raise ContractError(SPLIT_CHILD.end, "end marker without a matching start")
            break
        if stray_end != -1 and stray_end < begin:
            raise ContractError(SPLIT_CHILD.end, "end marker without a matching start")
        index = len(children)
        where = f"children[{index}]"
        content_start = begin + len(SPLIT_CHILD.start)
        finish = report.find(SPLIT_CHILD.end, content_start)
        if finish == -1:
            raise ContractError(f"{where}", f"{SPLIT_CHILD.start} without {SPLIT_CHILD.end}")
        chunk = report[content_start:finish]
        if SPLIT_CHILD.start in chunk:
            raise ContractError(f"{where}", f"{SPLIT_CHILD.start} nested inside another child")
        if index >= MAX_SPLIT_CHILDREN:
            raise ContractError("children", f"more than {MAX_SPLIT_CHILDREN} children")
        slug, body = parse_slug_document(chunk, where)
        if slug == parent_slug:
            raise ContractError(f"{where}.slug", "must differ from the parent's slug")
        if slug in seen:
            raise ContractError(
                f"{where}.slug", f"{slug!r} is already used by children[{seen[slug]}]"
            )
        seen[slug] = index
        children.append(build(SplitChild, where, slug=slug, body=body))
        position = finish + len(SPLIT_CHILD.end)
    if not children:
        raise ContractError("children", f"{SPLIT_REPORT.start} holds no {SPLIT_CHILD.start} block")
    return build(SplitProposal, SPLIT_REPORT.start, children=tuple(children))
