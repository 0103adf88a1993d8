"""Heal a cluster from the queue: the API defers a `heal_cluster` job (service.jobs.heal_jobs),
and a worker runs it in a process of its own (`python -m service.runs.heal_process CLUSTER
[INVENTORY]`) that restores the cluster's faults from the fault ledgers
(service.runs.heal.heal_everywhere), newest first.

- The job has the cluster's queue lock (service.jobs.names.cluster_lock): it never starts while
  a queued run of that cluster runs, and takes its turn with them in order.
- The process also holds the cluster's advisory lock (service.jobs.cluster_lock) while it heals,
  so it waits for a run started from the command line as well.
- Its own process, as every run has: the fault ledger a process records to is per process,
  and two heals of two clusters in one worker must not share it.

The web process only defers the job; it never heals.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from service.jobs.cluster_lock import ClusterLock
from service.store import db

from . import heal
from .environment import process_environment
from .exceptions import HealFailed

CLUSTER_WAIT_S = 6 * 3600  # as long as a queued run waits for a command-line run


async def heal_in_process(url: str, cluster: str, inventory: str | None) -> list[dict[str, Any]]:
    """Run the heal in its own process; return its results, or HealFailed saying why not."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "service.runs.heal_process", cluster, inventory or "",
        env=process_environment(url), stdout=asyncio.subprocess.PIPE,
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
        print("usage: python -m service.runs.heal_process CLUSTER [INVENTORY]", file=sys.stderr)
        return 2
    inventory = args[1] if len(args) == 2 and args[1] else None
    results = heal_holding_cluster(db.database_url(), args[0], inventory)
    print(json.dumps(results, default=str))
    return 0 if all(r["restored"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
