"""One model run as the board records it: its profile, what it used and cost, and how
it ended; a CLI that reports no cost is priced by the configuration."""

from __future__ import annotations

from dataclasses import dataclass

from chatbot.board import Card, Job, RunRecord
from chatbot.config import RuntimeSection
from runners.runtimes import RunResult, Usage


@dataclass(frozen=True)
class Profile:
    runtime: str
    model: str
    reasoning_effort: str
    timeout_s: float
    idle_timeout_s: float
    #: The effort the configuration sets ([lanes.*] or [roles.*]), before the operator's
    #: choice or an escalation step changed it for the card.
    configured_effort: str = ""
    #: What the run's sandbox lets reach the network (`[lanes.*] network`).
    network: str = "provider"


def run_record(
    *,
    role: str,
    profile: Profile,
    takes_effort: bool,
    runtime_config: RuntimeSection,
    result: RunResult,
    job: Job,
    card: Card,
    prompt: str | None,
    started: float,
) -> RunRecord:
    """The telemetry row of one run; `prompt` only when transcripts are kept."""
    output = result.output
    cost, estimated = output.cost_usd, False
    if cost is None and output.usage is not None:
        cost = priced(runtime_config, output.usage)
        estimated = cost is not None
    return RunRecord(
        role=role,
        runtime=profile.runtime,
        configured_model=profile.model,
        actual_model=output.model,
        reasoning_effort=profile.configured_effort,
        input_tokens=output.usage.input_tokens if output.usage else None,
        cached_tokens=output.usage.cached_input_tokens if output.usage else None,
        output_tokens=output.usage.output_tokens if output.usage else None,
        cost_usd=cost,
        cost_estimated=estimated,
        duration_s=result.duration,
        turns=output.turns,
        outcome=(
            "interrupted"
            if output.interrupted and result.ok
            else "ok"
            if result.ok
            else (result.failure or "failed")[:240]
        ),
        session_id=output.session_id,
        job_id=job.id,
        card_id=card.id,
        prompt=prompt,
        response=output.answer if prompt is not None else None,
        created_at=started,
        pipeline_run_id=card.pipeline_run_id,
        # What the CLI was started with; None: its own default, or a CLI that takes
        # none. No CLI reports the effort it ran with (codex's session log names it
        # only when one is given).
        actual_reasoning_effort=(profile.reasoning_effort or None) if takes_effort else None,
    )


def priced(runtime: RuntimeSection, usage: Usage) -> float | None:
    """A run of a CLI that reports no cost: its tokens at the runtime's configured
    prices (US dollars per million); None when no price is configured."""
    prices = (runtime.usd_per_million_input_tokens, runtime.usd_per_million_output_tokens)
    if prices == (None, None):
        return None
    per_in, per_out = (price or 0.0 for price in prices)
    return (usage.input_tokens * per_in + usage.output_tokens * per_out) / 1_000_000
