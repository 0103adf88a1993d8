"""Heal jobs: a heal of a cluster deferred on the queue for a worker (service.worker.tasks
runs it through service.runs.heal_process), and a job's state. The job has the cluster's
queue lock, so it takes its turn with the cluster's runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import procrastinate

from clusters.access.inventory import load_cluster
from clusters.paths import default_inventory

from .exceptions import HealJobNotFound
from .names import HEAL_TASK, RUNS_QUEUE, cluster_lock


def defer(app: procrastinate.App, cluster: str, inventory: str | None = None) -> int:
    """Queue a heal of a cluster of the inventory; return the job id. UnknownCluster (and
    nothing queued) if the inventory has no such cluster."""
    inventory = str(Path(inventory or default_inventory()))
    load_cluster(inventory, cluster)
    with app.open():
        return app.configure_task(HEAL_TASK, queue=RUNS_QUEUE, lock=cluster_lock(cluster)).defer(
            cluster=cluster, inventory=inventory)


def job(app: procrastinate.App, job_id: int) -> dict[str, Any]:
    """A heal job's state: todo, doing, succeeded, failed, cancelled or aborted."""
    with app.open():
        jobs = app.job_manager.list_jobs(id=job_id, task=HEAL_TASK)
    if not jobs:
        raise HealJobNotFound(f"heal job {job_id} does not exist")
    return {"job_id": jobs[0].id, "cluster": jobs[0].task_kwargs.get("cluster"),
            "status": jobs[0].status}
