"""The job queue: a procrastinate app on Faultline's own PostgreSQL database.

procrastinate (PostgreSQL-only, maintained, async workers with abort, per-job
locks and deduplicated periodic tasks) keeps its jobs in the same database as
the runs, so any number of `faultline worker` processes, on any machine that
reaches the database, share one queue. Its schema is created by the Alembic
migrations (revision 0005).

The app made here defers jobs by task name (service.jobs.names) and manages them; it
knows no task. The worker's app (service.worker.app) is this app with the tasks added.
"""

from __future__ import annotations

import procrastinate

from service.store import db


def make_app(url: str | None = None) -> procrastinate.App:
    """The queue app for a database (default: DATABASE_URL or the embedded server).

    The database is migrated first, so procrastinate's tables exist.
    """
    url = url or db.database_url()
    db.engine(url)  # migrates
    return procrastinate.App(connector=procrastinate.PsycopgConnector(conninfo=db.libpq_url(url)))
