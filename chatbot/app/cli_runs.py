"""`chatbot runs`: the queued and running jobs, or every run of one pipeline."""

from __future__ import annotations

import json
import time
from typing import Any

from chatbot.app.views import JSON_SCHEMA_VERSION, run_json
from chatbot.board import BoardService
from chatbot.chat import render_spend
from chatbot.config import Config
from chatbot.domain import roles

EXIT_OK = 0
EXIT_FAILURE = 1


async def pipeline_runs(board: BoardService, wanted: str, as_json: bool, locale: str) -> int:
    pipeline, found = await board.reads.pipeline_runs(wanted)
    if as_json:
        runs = [run_json(slug, run) for slug, run in found]
        document = {
            "schema_version": JSON_SCHEMA_VERSION,
            "pipeline_run_id": pipeline,
            "runs": runs,
        }
        print(json.dumps(document, indent=2))
    else:
        print(render_spend.pipeline_runs(pipeline, found, locale))
    return EXIT_OK if found else EXIT_FAILURE


async def job_rows(board: BoardService, config: Config) -> list[dict[str, Any]]:
    """The queued and running jobs, as `chatbot runs --json` (and `chatbot mcp`) give them."""
    summary = await board.reads.summary()
    now = time.time()
    rows = []
    for job in summary.active_jobs:
        card = await board.reads.card_by_id(job.card_id) if job.card_id else None
        role = roles.BY_NAME.get(job.kind)
        if role is None:
            runtime = "-"  # a deploy runs no model
        elif role.profile_from is roles.ProfileFrom.LANE:
            runtime = (card.runtime if card else None) or config.lanes[job.lane].runtime
        else:
            runtime = config.role(job.kind).runtime
        since = job.started_at or job.created_at
        rows.append(
            {
                "id": job.id,
                "state": job.state.value,
                "kind": job.kind,
                "card": card.slug if card else None,
                "lane": job.lane,
                "runtime": runtime,
                "host": job.host if job.state.value == "running" else None,
                "age_s": round(now - since, 1),
            }
        )
    return rows


async def runs(board: BoardService, config: Config, as_json: bool) -> int:
    rows = await job_rows(board, config)
    if as_json:
        print(json.dumps({"schema_version": JSON_SCHEMA_VERSION, "jobs": rows}, indent=2))
        return EXIT_OK
    if not rows:
        print("no job is queued or running")
    for row in rows:
        print(
            f"#{row['id']:<5} {row['state']:<8} {row['kind']:<10} {row['card'] or '-':<24} "
            f"lane {row['lane']:<16} {row['runtime']:<10} {row['age_s']:7.0f}s"
            + (f"  on {row['host']}" if row["host"] else "")
        )
    return EXIT_OK
