"""The queue's jobs: one small task per job, taking ids; the bodies call services."""

from __future__ import annotations

import procrastinate

from . import run_supervisor

RUNS_QUEUE = "runs"

bp = procrastinate.Blueprint()


@bp.task(name="run_experiment", queue=RUNS_QUEUE, pass_context=True)
async def run_experiment(context: procrastinate.JobContext, run_id: int) -> str:
    """Run a queued run in a process of its own; a cancel interrupts it (rollbacks run).
    The job's lock (the cluster's, set when it is deferred) keeps runs on one cluster apart."""
    return await run_supervisor.supervise(run_id, context.additional_context["database_url"],
                                          context.should_abort)
