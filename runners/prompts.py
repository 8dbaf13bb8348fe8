"""Role prompts: templates from roles/ filled with trusted values and fenced data.

A template names two kinds of placeholder:

- `{{name}}`: a trusted value the bot computed itself (a slug, a commit hash,
  the allow-lists from configuration). It is inserted as given, but may not
  contain marker text.
- `{{data:name}}`: untrusted text (intent bodies, repository text, reports,
  conversations). `render` fences it itself, so a template cannot forget to.

Every placeholder must be filled and nothing else may be passed; either mistake
raises `PromptError`. Values are inserted in one pass, so placeholder-like text
inside a value is never expanded.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Mapping, Sequence
from functools import cache
from importlib import resources

from runners.contracts.inspector import TrustedDeployment
from runners.contracts.markers import MARKER_TOKEN_RE
from runners.contracts.operator_schema import MAX_CHILDREN
from runners.contracts.question import MAX_OPTIONS
from runners.contracts.split import MAX_SPLIT_CHILDREN
from runners.contracts.synthesis import MAX_GAPS
from runners.profiles import (
    ITERATION_LIMIT_MAX,
    ITERATION_LIMIT_MIN,
    MAX_ESCALATION_STEPS,
    AllowedProfiles,
)

# The templates are package data of `roles`, so an installed wheel has them too.
TEMPLATES = "roles"

PLACEHOLDER_RE = re.compile(r"\{\{\s*(data:)?([a-z][a-z0-9_]*)\s*\}\}")
_NAME_RE = re.compile(r"[a-z][a-z0-9-]*")
# A leading HTML comment documents the template for maintainers; models never see it.
_HEADER_RE = re.compile(r"\A<!--.*?-->\n*", re.DOTALL)
_LINE_BREAKS_RE = re.compile(r"\r\n|[\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")
_CONTROL_RE = re.compile(r"[\x00-\x08\x0e-\x1b\x1f\x7f-\x84\x86-\x9f]")
_BACKTICKS_RE = re.compile(r"`+")

EMPTY_DATA = "(none)"


class PromptError(ValueError):
    """A template was rendered with missing, unknown or unsafe values."""


def template_names() -> tuple[str, ...]:
    found = resources.files(TEMPLATES).iterdir()
    return tuple(sorted(p.name[: -len(".md")] for p in found if p.name.endswith(".md")))


@cache
def template_text(template_name: str) -> str:
    """A template as the model sees it (without its maintainers' header comment)."""
    if _NAME_RE.fullmatch(template_name) is None:
        raise PromptError(f"invalid template name {template_name!r}")
    path = resources.files(TEMPLATES) / f"{template_name}.md"
    if not path.is_file():
        raise PromptError(f"no template roles/{template_name}.md")
    return _HEADER_RE.sub("", path.read_text(encoding="utf-8"), count=1)


def placeholders(template_name: str) -> dict[str, bool]:
    """Every placeholder of a template, mapped to whether it holds fenced data."""
    found: dict[str, bool] = {}
    for match in PLACEHOLDER_RE.finditer(template_text(template_name)):
        is_data, name = match.group(1) is not None, match.group(2)
        if found.setdefault(name, is_data) != is_data:
            raise PromptError(f"{template_name}: {name!r} is used both as data and as a value")
    return found


def defuse(untrusted_text: str) -> str:
    """Untrusted text with marker tokens broken up and stray control characters removed.

    `===END-OPERATOR-DECISION===` becomes `=== END-OPERATOR-DECISION ===`: still
    readable, but no longer a token any parser (or a model reading the prompt)
    would take for a real marker.
    """
    text = _LINE_BREAKS_RE.sub("\n", untrusted_text)
    text = _CONTROL_RE.sub("", text)
    # Breaking one token can expose an overlapping one, hence the loop; each pass
    # removes at least one "===X" start and creates none, so it ends.
    while MARKER_TOKEN_RE.search(text):
        text = MARKER_TOKEN_RE.sub(r"=== \1 ===", text)
    return text


def fence(untrusted_text: str) -> str:
    """A code fence no line of the text can close, around the defused text.

    The fence is one backtick longer than the longest backtick run inside, so
    (as in CommonMark) nothing inside can end it early.
    """
    text = defuse(untrusted_text).strip("\n") or EMPTY_DATA
    longest = max((len(run) for run in _BACKTICKS_RE.findall(text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}text\n{text}\n{ticks}"


def render(template_name: str, **values: str | int) -> str:
    """Fill one template; every placeholder exactly once, data fenced."""
    template = template_text(template_name)
    wanted = placeholders(template_name)
    missing = sorted(set(wanted) - set(values))
    unknown = sorted(set(values) - set(wanted))
    if missing or unknown:
        raise PromptError(f"{template_name}: missing {missing}, unknown {unknown}")
    filled: dict[str, str] = {}
    for name, value in values.items():
        if isinstance(value, bool) or not isinstance(value, str | int):
            raise PromptError(f"{template_name}: {name!r} must be text or an integer")
        text = str(value)
        if wanted[name]:
            filled[name] = fence(text)
        elif MARKER_TOKEN_RE.search(text):
            raise PromptError(f"{template_name}: trusted value {name!r} contains marker text")
        else:
            filled[name] = text
    return PLACEHOLDER_RE.sub(lambda match: filled[match.group(2)], template)


# Per-role entry points: each one is the whole list of what the bot must supply.


def lane_profiles_json(allowed: AllowedProfiles) -> str:
    """The lanes as the operator must copy them; a default effort ("") shows as null."""
    shown = {
        name: {
            "runtime": lane.runtime,
            "model": lane.model,
            "reasoning_effort": lane.reasoning_effort or None,
        }
        for name, lane in sorted(allowed.lanes.items())
    }
    return json.dumps(shown, indent=2, ensure_ascii=False)


def escalation_models_json(allowed: AllowedProfiles) -> str:
    runtimes = sorted({lane.runtime for lane in allowed.lanes.values()})
    pools = {runtime: list(allowed.escalation_pool(runtime)) for runtime in runtimes}
    return json.dumps(pools, indent=2, ensure_ascii=False)


def operator_prompt(
    *, slug: str, intent_path: str, intent_body: str, allowed: AllowedProfiles, clarifications: str
) -> str:
    return render(
        "operator",
        slug=slug,
        intent_path=intent_path,
        intent_body=intent_body,
        clarifications=clarifications,
        lane_names=", ".join(f"`{name}`" for name in sorted(allowed.lanes)),
        lane_profiles=lane_profiles_json(allowed),
        escalation_models=escalation_models_json(allowed),
        max_children=MAX_CHILDREN,
        max_escalation_steps=MAX_ESCALATION_STEPS,
        iteration_limit_min=ITERATION_LIMIT_MIN,
        iteration_limit_max=ITERATION_LIMIT_MAX,
    )


def planner_split_prompt(
    *, slug: str, intent_path: str, intent_body: str, builder_report: str
) -> str:
    return render(
        "planner-split",
        slug=slug,
        intent_path=intent_path,
        intent_body=intent_body,
        builder_report=builder_report,
        max_children=MAX_SPLIT_CHILDREN,
    )


def format_conversation(turns: Sequence[tuple[str, str]]) -> str:
    """`(speaker, text)` turns as `Speaker: text`, continuation lines indented.

    The indent keeps a message from starting a line that looks like another
    speaker's turn.
    """
    lines = []
    for speaker, text in turns:
        body = "\n  ".join(_LINE_BREAKS_RE.sub("\n", text).strip().split("\n"))
        if body:
            lines.append(f"{speaker.strip().capitalize()}: {body}")
    return "\n".join(lines) if lines else "(no conversation yet)"


def planner_draft_prompt(*, conversation: Sequence[tuple[str, str]]) -> str:
    return render(
        "planner-draft", conversation=format_conversation(conversation), max_options=MAX_OPTIONS
    )


NO_CRITERIA = "(none given: the intent's own success criteria are the measure)"


def criteria_list(acceptance_criteria: Sequence[str]) -> str:
    """The acceptance criteria of a split child, one `- ` line each."""
    lines = [f"- {c.strip()}" for c in acceptance_criteria if c.strip()]
    return "\n".join(lines) or NO_CRITERIA


def builder_prompt(
    *,
    slug: str,
    intent_path: str,
    intent_body: str,
    write_scope: Sequence[str],
    feedback: str,
    acceptance_criteria: Sequence[str] = (),
) -> str:
    return render(
        "builder",
        slug=slug,
        intent_path=intent_path,
        intent_body=intent_body,
        acceptance_criteria=criteria_list(acceptance_criteria),
        write_scope="\n".join(write_scope) or "(not declared: stay within what the intent needs)",
        feedback=feedback,
    )


def builder_continue_prompt() -> str:
    """The next iteration of a resumed builder session: the intent is already in context."""
    return render("builder-continue")


def steered_prompt(owner_text: str) -> str:
    """An interrupted session goes on with the owner's words (/steer after /interrupt)."""
    return (
        "The owner interrupted your last turn and now says:\n\n"
        f"{owner_text.strip()}\n\n" + builder_continue_prompt()
    )


def checks_failed_prompt(command: Sequence[str], verdict: str, tail: str) -> str:
    """The next iteration after a commit the repository's checks failed: their end."""
    shown = " ".join(command)
    return (
        f"The wrapper committed your change and ran the repository's checks (`{defuse(shown)}`): "
        f"{verdict}. The end of their output:\n\n{fence(tail)}\n\n"
        "Fix the cause (not the checks), then end with the same blocks again; the wrapper "
        "commits on top and runs the checks again.\n\n" + builder_continue_prompt()
    )


def reviewer_prompt(
    *,
    slug: str,
    commit_hash: str,
    intent_path: str,
    intent_body: str,
    builder_report: str,
    acceptance_criteria: Sequence[str] = (),
    owner_comments: Sequence[Mapping[str, object]] = (),
    checks: str = "",
) -> str:
    """`owner_comments`: the line comments the commit answers (file, lines, code, text);
    `checks`: what the repository's checks said of the commit ("" : none are set)."""
    return render(
        "reviewer",
        checks=checks or "No checks are set for this repository or card.",
        slug=slug,
        commit_hash=commit_hash,
        intent_path=intent_path,
        intent_body=intent_body,
        acceptance_criteria=criteria_list(acceptance_criteria),
        builder_report=builder_report,
        owner_comments=json.dumps(list(owner_comments), indent=2, ensure_ascii=False),
    )


def synthesis_prompt(
    *, slug: str, intent_path: str, intent_body: str, children: Sequence[Mapping[str, object]]
) -> str:
    """`children`: one mapping per child (slug, title, commit, criteria, reports), shown
    as data; the slugs also as the trusted list the result must name."""
    slugs = [str(child["slug"]) for child in children]
    return render(
        "synthesis",
        slug=slug,
        intent_path=intent_path,
        intent_body=intent_body,
        children=json.dumps(list(children), indent=2, ensure_ascii=False),
        child_slugs=json.dumps(slugs),
        max_gaps=MAX_GAPS,
    )


def researcher_prompt(*, slug: str, research_intent_path: str, intent_body: str) -> str:
    return render(
        "researcher", slug=slug, research_intent_path=research_intent_path, intent_body=intent_body
    )


def inspector_prompt(
    *,
    mode: str,
    slug: str,
    checked_revision: str | None,
    deployment: TrustedDeployment,
    intent_path: str,
    intent_body: str,
    builder_report: str,
    failure: str,
    review_report: str,
    question_history: Sequence[Mapping[str, str]],
    allowed_actions: Collection[str] = (),
) -> str:
    """`deployment` is shown in implementation_status mode, `allowed_actions` (the
    same list `parse_routing` gets, see `routing_actions`) in route_next mode."""
    if mode not in ("implementation_status", "route_next"):
        raise PromptError(f"unknown inspector mode {mode!r}")
    if mode == "route_next" and not allowed_actions:
        raise PromptError("route_next needs the allowed actions")
    values: dict[str, str | int] = {
        "slug": slug,
        "checked_revision": checked_revision or "null",
        "intent_path": intent_path,
        "intent_body": intent_body,
        "builder_report": builder_report,
        "failure": failure,
        "review_report": review_report,
        "question_history": json.dumps(list(question_history), indent=2, ensure_ascii=False),
    }
    if mode == "implementation_status":
        # Deployment evidence is the wrapper's, but its findings may quote logs: data.
        values["deployment"] = deployment.model_dump_json(indent=2)
        return render("inspector-implementation-status", **values)
    values["allowed_actions"] = json.dumps(list(allowed_actions))
    return render("inspector-route-next", **values)


def fixer_prompt(
    *,
    slug: str,
    original_phase: str,
    intent_path: str,
    intent_body: str,
    write_scope: Sequence[str],
    builder_report: str,
    failure: str,
    review_report: str,
    commit_hash: str | None,
    question_history: Sequence[Mapping[str, str]],
    question_rounds_left: int,
    acceptance_criteria: Sequence[str] = (),
    attempt: int = 1,
    owner_comments: Sequence[Mapping[str, object]] = (),
) -> str:
    return render(
        "fixer",
        owner_comments=json.dumps(list(owner_comments), indent=2, ensure_ascii=False),
        slug=slug,
        original_phase=original_phase,
        attempt=attempt,
        intent_path=intent_path,
        intent_body=intent_body,
        acceptance_criteria=criteria_list(acceptance_criteria),
        write_scope="\n".join(write_scope) or "(not declared: stay within what the intent needs)",
        builder_report=builder_report,
        failure=failure,
        review_report=review_report,
        commit_hash=commit_hash or "(none)",
        question_history=json.dumps(list(question_history), indent=2, ensure_ascii=False),
        question_rounds_left=question_rounds_left,
        max_options=MAX_OPTIONS,
    )
