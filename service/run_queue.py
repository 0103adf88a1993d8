"""Queue a run and cancel one: what the API, the dashboard, the schedules and
`faultline enqueue` call.

A run is checked before it is queued (experiment, cluster, workload: everything
that does not need the cluster, which may be busy with another run's fault), so
bad input queues nothing; its row is committed before its job is deferred, so a
worker never picks a job whose run it cannot see.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import procrastinate
from sqlalchemy import update
from sqlalchemy.orm import Session, sessionmaker

from clusters.paths import default_inventory
from loadgen.workload import parse_workload

from . import experiments
from .figures import get_run
from .models import Run
from .queue import cluster_lock
from .tasks import run_experiment


class QueueError(Exception):
    """The run cannot be queued or cancelled as asked."""


def enqueue(sessions: sessionmaker[Session], app: procrastinate.App,
            experiment: dict[str, Any], *, cluster: str | None = None,
            inventory: str | None = None, experiment_path: str | None = None,
            workload: dict[str, Any] | None = None, requested_by: str | None = None) -> int:
    """Queue one run of an experiment on a cluster; return its run id."""
    if workload:
        experiment = experiments.with_workload(experiment, workload)
    target = experiments.check_static(experiment, cluster, inventory)
    arguments = experiments.faultline_control(experiment)["provider"]["arguments"]
    with sessions.begin() as session:
        run = Run(title=experiment.get("title", "untitled"), experiment_path=experiment_path,
                  cluster=target.name, cluster_kind=target.kind, status="queued",
                  workload=parse_workload(arguments.get("workload")).as_dict(),
                  experiment=experiment, inventory=str(Path(inventory or default_inventory())),
                  requested_by=requested_by, queued_at=datetime.now(UTC))
        session.add(run)
        session.flush()
        run_id = run.id
    with app.open():
        job_id = app.configure_task(run_experiment.name,
                                    lock=cluster_lock(target.name)).defer(run_id=run_id)
    with sessions.begin() as session:
        session.execute(update(Run).where(Run.id == run_id).values(job_id=job_id))
    return run_id


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
