"""The queue's jobs: one small task per job, taking ids; the bodies call services."""

from __future__ import annotations

import asyncio
import logging

import procrastinate

from . import db, run_queue, run_supervisor, schedules, verdicts
from .queue import RUNS_QUEUE, SCHEDULES_QUEUE

logger = logging.getLogger(__name__)

bp = procrastinate.Blueprint()


@bp.task(name="run_experiment", queue=RUNS_QUEUE, pass_context=True)
async def run_experiment(context: procrastinate.JobContext, run_id: int) -> str:
    """Run a queued run in a process of its own; a cancel interrupts it (rollbacks run).
    The job's lock (the cluster's, set when it is deferred) keeps runs on one cluster apart.
    A scheduled run is then judged against its series."""
    url = context.additional_context["database_url"]
    try:
        return await run_supervisor.supervise(run_id, url, context.should_abort)
    finally:
        await asyncio.to_thread(verdicts.judge_run, db.session_factory(url), run_id)


# procrastinate defers a periodic job once per minute, however many workers run
@bp.periodic(cron="* * * * *", periodic_id="schedules")
@bp.task(name="tick_schedules", queue=SCHEDULES_QUEUE, pass_context=True)
async def tick_schedules(context: procrastinate.JobContext, timestamp: int) -> int:
    """Queue the runs of every due schedule slot; return how many."""
    sessions = db.session_factory(context.additional_context["database_url"])
    inventory = context.additional_context.get("inventory")
    runs = await asyncio.to_thread(schedules.claim_due, sessions, None, inventory)
    # and runs whose job a crash kept from being deferred after their commit
    runs += await asyncio.to_thread(run_queue.queued_without_job, sessions)
    for run_id, cluster in runs:
        await run_queue.defer_async(sessions, context.app, run_id, cluster)
        logger.info(f"queued run {run_id} on {cluster}")
    return len(runs)
