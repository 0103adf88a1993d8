"""The queue's jobs: one small task per job, taking ids; the bodies call services.

`blueprint()` makes a procrastinate blueprint of them for one app: an app that takes a
blueprint's tasks renames them into its namespace, so a blueprint shared by two apps
(two Flask apps, two tests) would leave the second with unknown task names, whose jobs
go to the default queue that no worker reads.
"""

from __future__ import annotations

import asyncio
import logging

import procrastinate

from service.jobs import run_queue
from service.jobs.names import LOAD_QUEUE, RUNS_QUEUE, SCHEDULES_QUEUE
from service.runs import heal, heal_process, load_driver
from service.runs import supervisor as run_supervisor
from service.schedules import services as schedules
from service.schedules import verdicts
from service.store import db

logger = logging.getLogger(__name__)


def blueprint() -> procrastinate.Blueprint:
    """The tasks, with their queues, on a new blueprint."""
    bp = procrastinate.Blueprint()
    bp.task(name="run_experiment", queue=RUNS_QUEUE, pass_context=True)(run_experiment)
    bp.task(name="heal_cluster", queue=RUNS_QUEUE, pass_context=True)(heal_cluster)
    bp.task(name="drive_load", queue=LOAD_QUEUE, pass_context=True)(drive_load)
    # procrastinate defers a periodic job once per tick, however many workers run; a tick
    # every 10 s (croniter's sixth field) queues a due slot within 10 s of its minute, not 60
    bp.periodic(cron="* * * * * */10", periodic_id="schedules")(
        bp.task(name="tick_schedules", queue=SCHEDULES_QUEUE, pass_context=True)(
            tick_schedules))
    return bp


async def run_experiment(context: procrastinate.JobContext, run_id: int) -> str:
    """Run a queued run in a process of its own; a cancel interrupts it (rollbacks run).
    The job's lock (the cluster's, set when it is deferred) keeps runs on one cluster apart.
    A scheduled run is then judged against its series."""
    url = context.additional_context["database_url"]
    try:
        return await run_supervisor.supervise(run_id, url, context.should_abort)
    finally:
        await asyncio.to_thread(verdicts.judge_run, db.session_factory(url), run_id)


async def heal_cluster(context: procrastinate.JobContext, cluster: str,
                       inventory: str | None = None) -> int:
    """Restore the faults the fault ledgers hold for a cluster (service.runs.heal.heal_everywhere,
    in a process of its own that holds the cluster); fail if a restore failed. The job's
    lock (the cluster's, set when it is deferred) keeps it apart from the cluster's runs."""
    results = await heal_process.heal_in_process(context.additional_context["database_url"],
                                             cluster, inventory)
    for result in results:
        logger.info(heal.format_result(result))
    return len(results)


async def drive_load(context: procrastinate.JobContext, run_id: int, index: int) -> int:
    """One load driver of a run on several hosts (service.runs.load_driver), in a thread: its
    driver's completions come from librados' or the Swift workers' own threads anyway."""
    sessions = db.session_factory(context.additional_context["database_url"])
    return await asyncio.to_thread(load_driver.drive, sessions, run_id, index)


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
