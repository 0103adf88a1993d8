"""Heal a cluster from the queue: the API defers a `heal_cluster` job, and a worker runs it
in a process of its own (`python -m service.heal_job CLUSTER [INVENTORY]`) that restores the
cluster's faults from the fault ledgers (service.heal.heal_everywhere), newest first.

- The job has the cluster's queue lock (service.queue.cluster_lock): it never starts while
  a queued run of that cluster runs, and takes its turn with them in order.
- The process also holds the cluster's advisory lock (service.cluster_lock) while it heals,
  so it waits for a run started from the command line as well.
- Its own process, as every run has: the fault ledger a process records to is per process,
  and two heals of two clusters in one worker must not share it.

The web process only defers the job; it never heals.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import procrastinate

from clusters.inventory import load_cluster
from clusters.paths import default_inventory

from . import db, heal
from .cluster_lock import ClusterLock
from .queue import HEAL_TASK, cluster_lock

CLUSTER_WAIT_S = 6 * 3600  # as long as a queued run waits for a command-line run


class HealJobNotFound(LookupError):
    pass


class HealFailed(Exception):
    """A restore failed (its fault stays in the ledger) or the heal could not start."""


def defer(app: procrastinate.App, cluster: str, inventory: str | None = None) -> int:
    """Queue a heal of a cluster of the inventory; return the job id. UnknownCluster (and
    nothing queued) if the inventory has no such cluster."""
    inventory = str(Path(inventory or default_inventory()))
    load_cluster(inventory, cluster)
    with app.open():
        return app.configure_task(HEAL_TASK, lock=cluster_lock(cluster)).defer(
            cluster=cluster, inventory=inventory)


def job(app: procrastinate.App, job_id: int) -> dict[str, Any]:
    """A heal job's state: todo, doing, succeeded, failed, cancelled or aborted."""
    with app.open():
        jobs = app.job_manager.list_jobs(id=job_id, task=HEAL_TASK)
    if not jobs:
        raise HealJobNotFound(f"heal job {job_id} does not exist")
    return {"job_id": jobs[0].id, "cluster": jobs[0].task_kwargs.get("cluster"),
            "status": jobs[0].status}


async def heal_in_process(url: str, cluster: str, inventory: str | None) -> list[dict[str, Any]]:
    """Run the heal in its own process; return its results, or HealFailed saying why not."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "service.heal_job", cluster, inventory or "",
        env={**os.environ, "DATABASE_URL": url}, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, start_new_session=True)  # a worker's Ctrl-C waits
    out, err = await process.communicate()
    if process.returncode not in (0, 1):
        lines = err.decode(errors="replace").strip().splitlines() or ["no output"]
        raise HealFailed(f"the heal of {cluster} exited {process.returncode}: {lines[-1]}")
    results = json.loads(out)
    failed = [heal.format_result(r) for r in results if not r["restored"]]
    if failed:
        raise HealFailed("; ".join(failed))
    return results


def heal_holding_cluster(url: str, cluster: str, inventory: str | None,
                         wait_s: float = CLUSTER_WAIT_S) -> list[dict[str, Any]]:
    """Take the cluster (waiting for a run on it to end), then heal it."""
    sessions = db.session_factory(url)
    lock = ClusterLock(url, cluster).acquire(sessions, wait_s=wait_s)
    try:
        return heal.heal_everywhere(sessions, cluster, inventory)
    finally:
        lock.release()


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) not in (1, 2):
        print("usage: python -m service.heal_job CLUSTER [INVENTORY]", file=sys.stderr)
        return 2
    inventory = args[1] if len(args) == 2 and args[1] else None
    results = heal_holding_cluster(db.database_url(), args[0], inventory)
    print(json.dumps(results, default=str))
    return 0 if all(r["restored"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
