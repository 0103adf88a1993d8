"""The job queue's names, shared by whoever defers a job and the worker that runs it: the
queues, the tasks (in Faultline's namespace) and the per-cluster lock."""

from __future__ import annotations

RUNS_QUEUE = "runs"
SCHEDULES_QUEUE = "schedules"
LOAD_QUEUE = "load"  # the load drivers of runs on several hosts (service.runs.load_driver)
NAMESPACE = "faultline"
RUN_TASK = f"{NAMESPACE}:run_experiment"
HEAL_TASK = f"{NAMESPACE}:heal_cluster"
LOAD_TASK = f"{NAMESPACE}:drive_load"


def cluster_lock(cluster: str) -> str:
    """procrastinate's lock for runs on a cluster: such jobs run one at a time, in order."""
    return f"cluster:{cluster}"
