"""The job queue: a procrastinate app on Faultline's own PostgreSQL database.

procrastinate (PostgreSQL-only, maintained, async workers with abort, per-job
locks and deduplicated periodic tasks) keeps its jobs in the same database as
the runs, so any number of `faultline worker` processes, on any machine that
reaches the database, share one queue. Its schema is created by the Alembic
migrations (revision 0005).
"""

from __future__ import annotations

import procrastinate

from . import db

RUNS_QUEUE = "runs"
SCHEDULES_QUEUE = "schedules"
LOAD_QUEUE = "load"  # the load drivers of runs on several hosts (service.load_driver)
NAMESPACE = "faultline"
RUN_TASK = f"{NAMESPACE}:run_experiment"
HEAL_TASK = f"{NAMESPACE}:heal_cluster"
LOAD_TASK = f"{NAMESPACE}:drive_load"


def make_app(url: str | None = None) -> procrastinate.App:
    """The queue app for a database (default: DATABASE_URL or the embedded server).

    The database is migrated first, so procrastinate's tables exist.
    """
    from . import tasks  # the tasks call services that use this module

    url = url or db.database_url()
    db.engine(url)  # migrates
    app = procrastinate.App(connector=procrastinate.PsycopgConnector(conninfo=db.libpq_url(url)))
    app.add_tasks_from(tasks.blueprint(), namespace=NAMESPACE)
    return app


def cluster_lock(cluster: str) -> str:
    """procrastinate's lock for runs on a cluster: such jobs run one at a time, in order."""
    return f"cluster:{cluster}"
