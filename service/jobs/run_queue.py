"""Queue a run and cancel one: what the API, the dashboard, the schedules and
`faultline enqueue` call.

A run is checked before it is queued (the allow-list of what an experiment may run, the
experiment, cluster, workload: everything that does not need the cluster, which may be busy
with another run's fault), so bad input queues nothing; a guard override (allow_unavailable)
needs an admin, who is recorded on the run; its row is committed before its job is deferred, so a
worker never picks a job whose run it cannot see.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import procrastinate
from sqlalchemy import select, update
from sqlalchemy.orm import Session, sessionmaker

from clusters.paths import default_inventory
from loadgen.workload import parse_workload
from service.accounts import audit
from service.experiments import allowlist, documents
from service.results.figures import get_run
from service.store.models import Run

from .exceptions import QueueError
from .names import RUN_TASK, RUNS_QUEUE, cluster_lock


def enqueue(sessions: sessionmaker[Session], app: procrastinate.App,
            experiment: dict[str, Any], *, cluster: str | None = None,
            inventory: str | None = None, experiment_path: str | None = None,
            workload: dict[str, Any] | None = None, requested_by: str | None = None,
            role: str | None = None) -> int:
    """Queue one run of an experiment on a cluster; return its run id."""
    with sessions.begin() as session:
        run = queued_run(session, experiment, cluster=cluster, inventory=inventory,
                         experiment_path=experiment_path, workload=workload,
                         requested_by=requested_by, role=role)
        run_id, target = run.id, run.cluster
    with app.open():
        defer(sessions, app, run_id, target)
    return run_id


def queued_run(session: Session, experiment: dict[str, Any], *, cluster: str | None = None,
               inventory: str | None = None, experiment_path: str | None = None,
               workload: dict[str, Any] | None = None, requested_by: str | None = None,
               schedule_id: int | None = None, role: str | None = None) -> Run:
    """Check a run and add its queued row to the session (the caller commits, then defers).
    `role` is the requester's: a guard override needs "admin" (GuardOverrideRefused)."""
    if workload:
        experiment = documents.with_workload(experiment, workload)
    allowlist.check(experiment)
    override_by = allowlist.check_guard_overrides(experiment, requested_by, role)
    target = documents.check_static(experiment, cluster, inventory)
    arguments = documents.faultline_control(experiment)["provider"]["arguments"]
    run = Run(title=experiment.get("title", "untitled"), experiment_path=experiment_path,
              cluster=target.name, cluster_kind=target.kind, status="queued",
              workload=parse_workload(arguments.get("workload")).as_dict(),
              experiment=experiment, inventory=str(Path(inventory or default_inventory())),
              requested_by=requested_by, guard_override_by=override_by,
              queued_at=datetime.now(UTC), schedule_id=schedule_id)
    session.add(run)
    session.flush()
    if override_by:  # in the run's own transaction: no override without its record
        audit.record(session, override_by, "guard.override", f"run {run.id}",
                     {"overrides": allowlist.guard_overrides(experiment),
                      "cluster": run.cluster, "experiment": run.title})
    return run


def defer(sessions: sessionmaker[Session], app: procrastinate.App, run_id: int,
          cluster: str) -> int:
    """Give a committed queued run its job (the app is open); return the job id."""
    job_id = app.configure_task(RUN_TASK, queue=RUNS_QUEUE, lock=cluster_lock(cluster)).defer(
        run_id=run_id)
    _set_job(sessions, run_id, job_id)
    return job_id


async def defer_async(sessions: sessionmaker[Session], app: procrastinate.App, run_id: int,
                      cluster: str) -> int:
    """defer() from a worker's event loop."""
    task = app.configure_task(RUN_TASK, queue=RUNS_QUEUE, lock=cluster_lock(cluster))
    job_id = await task.defer_async(run_id=run_id)
    await asyncio.to_thread(_set_job, sessions, run_id, job_id)
    return job_id


def queued_without_job(sessions: sessionmaker[Session],
                       older_than_s: float = 60.0) -> list[tuple[int, str]]:
    """Queued runs that never got their job (the process died between commit and defer)."""
    cutoff = datetime.now(UTC) - timedelta(seconds=older_than_s)
    with sessions() as session:
        rows = session.execute(select(Run.id, Run.cluster).where(
            Run.status == "queued", Run.job_id.is_(None), Run.queued_at < cutoff)).all()
    return [(run_id, cluster) for run_id, cluster in rows]


def _set_job(sessions: sessionmaker[Session], run_id: int, job_id: int) -> None:
    with sessions.begin() as session:
        session.execute(update(Run).where(Run.id == run_id).values(job_id=job_id))


def cancel(sessions: sessionmaker[Session], app: procrastinate.App, run_id: int) -> str:
    """Cancel a queued run (it never starts) or interrupt a running one (its rollbacks
    run); return what happened: "cancelled" or "cancelling"."""
    with sessions() as session:
        run = get_run(session, run_id)
        status, job_id = run.status, run.job_id
    if status not in ("queued", "running"):
        raise QueueError(f"run {run_id} is {status}: there is nothing to cancel")
    if job_id is None:
        raise QueueError(f"run {run_id} was not started by a worker (it runs from a "
                         "command line); stop it there with Ctrl-C, its rollbacks run")
    with app.open():
        if status == "queued" and app.job_manager.cancel_job_by_id(job_id):
            with sessions.begin() as session:
                session.execute(update(Run).where(Run.id == run_id, Run.status == "queued")
                                .values(status="cancelled", ended_at=datetime.now(UTC)))
            return "cancelled"
        # a worker has it (maybe since a moment ago): ask it to interrupt the run
        if not app.job_manager.cancel_job_by_id(job_id, abort=True):
            raise QueueError(f"run {run_id} has just ended; there is nothing to cancel")
    return "cancelling"
