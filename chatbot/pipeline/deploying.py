"""Deploy an approved card: merge its commit into the target branch, then run the command.

Idempotent per `slug:commit` (the job's key): a repeated request finds the first
job and never deploys twice.
"""

from __future__ import annotations

from chatbot.domain.transitions import Action
from chatbot.pipeline.context import JobContext, RunFailed
from runners.process import ProcessLimits, default_base_env, run_process
from runners.workspace import MergeConflictError, WorkspaceError, merge_card


async def run_deploy(ctx: JobContext) -> None:
    card = ctx.card
    commit = ctx.payload.get("commit") or card.commit_hash
    if not commit:
        raise RunFailed("no reviewed commit to deploy")
    if ctx.target_branch is None:
        raise RunFailed(f"{ctx.repo} has no branch to merge into")
    try:
        merged = await merge_card(
            ctx.repo,
            ctx.target_branch,
            commit=commit,
            message=f"Merge card {card.slug} ({commit[:12]})",
            shared=ctx.config.bot.remote is not None,
        )
    except MergeConflictError as conflict:
        raise RunFailed(
            f"merge conflict in {', '.join(conflict.paths)}; nothing was changed"
        ) from None
    except WorkspaceError as error:
        raise RunFailed(f"merge failed: {error}") from None
    deploy = ctx.config.deploy
    if deploy is None or not deploy.command:
        await ctx.apply(
            Action.DEPLOY_SUCCEEDED,
            reason=f"merged into {ctx.target_branch} at {merged.commit[:12]}",
            details={"merge": merged.commit, "command": None},
            deployment_status="merged",
        )
        return
    argv = [
        part.replace("{commit}", commit).replace("{slug}", card.slug) for part in deploy.command
    ]
    result = await run_process(
        argv,
        cwd=ctx.repo,
        base_env=default_base_env(),
        limits=ProcessLimits(timeout=deploy.timeout_s, idle_timeout=None),
    )
    if not result.ok:
        tail = (result.stderr_tail or "").strip().splitlines()[-1:] or [result.error or ""]
        raise RunFailed(f"deploy command {result.outcome.value}: {tail[0]}")
    await ctx.apply(
        Action.DEPLOY_SUCCEEDED,
        reason=f"deployed {commit[:12]}",
        details={"merge": merged.commit, "command": argv[0], "output": result.stdout[-2000:]},
        deployment_status="deployed",
    )
