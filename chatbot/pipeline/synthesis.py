"""The synthesis of a split: once every child succeeded, one read-only run reports what
each child changed and where the whole falls short of the parent's intent.

The wrapper writes the report to docs/review/<parent>.md and posts it; the parent is
then done (gaps are reported, not blocking: the owner decides what follows).
"""

from __future__ import annotations

from chatbot.board import Card
from chatbot.domain.transitions import Action
from chatbot.pipeline.context import JobContext, RunFailed
from runners import prompts
from runners.contracts import parse_synthesis

# Per child, enough of its reports to judge it; the commits themselves are in git.
REPORT_CHARS = 3000


def _cut(text: str) -> str:
    return text if len(text) <= REPORT_CHARS else text[:REPORT_CHARS] + " …"


def _child(child: Card) -> dict[str, object]:
    reviews = child.data.reviews
    return {
        "slug": child.slug,
        "title": child.title,
        "phase": child.phase.value,
        "intent_path": child.source_path or f"docs/intent/{child.slug}.md",
        "commit": child.commit_hash,
        "acceptance_criteria": list(child.acceptance_criteria),
        "review_decision": child.review_decision,
        "builder_report": _cut(child.data.builder_report),
        "review_report": _cut(reviews[-1]["report"] if reviews else ""),
    }


async def run_synthesis(ctx: JobContext) -> None:
    card = ctx.card
    children = await ctx.board.reads.children_of(card.id)
    if not children:
        raise RunFailed("the card has no children to sum up")
    intent_path, body = ctx.intent()
    prompt = prompts.synthesis_prompt(
        slug=card.slug,
        intent_path=intent_path,
        intent_body=body,
        children=[_child(child) for child in children],
    )
    result = await ctx.run(prompt, cwd=ctx.repo)
    answer = parse_synthesis(result.output.answer, [child.slug for child in children])
    path = f"docs/review/{card.slug}.md"
    files = ctx.staged()
    files.add(path, answer.report)
    gaps = list(answer.gaps)
    await ctx.apply(
        Action.SYNTHESIS_DONE,
        reason=f"synthesis of {len(children)} children written to {path}",
        files=files,
        details={"report": answer.report, "path": path, "gaps": gaps},
        review_report_path=path,
        data=card.data.updated(synthesis={"path": path, "gaps": gaps}),
    )
