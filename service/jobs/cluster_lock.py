"""One experiment per cluster at a time, whoever starts it: a worker, `faultline run` or
`chaos run`.

The lock is a PostgreSQL session advisory lock held on a connection of its own for
the whole run, so it is shared by every process and machine that uses the
database, and a process that dies (even by SIGKILL) lets it go with its
connection. The queue orders the worker's runs on top of this (service.jobs.names).
"""

from __future__ import annotations

import psycopg
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from clusters.polling import PollTimeout, poll_until
from service.store.db import libpq_url
from service.store.models import Run

from .exceptions import ClusterBusy


class ClusterLock:
    def __init__(self, url: str, cluster: str):
        self.url = url
        self.cluster = cluster
        self._conn: psycopg.Connection | None = None

    def acquire(self, sessions: sessionmaker[Session], wait_s: float = 0.0,
                poll_s: float = 2.0) -> ClusterLock:
        """Take the lock, waiting up to `wait_s`; ClusterBusy names the run that holds it."""
        conn = psycopg.connect(libpq_url(self.url), autocommit=True)
        def locked() -> bool:
            return conn.execute("SELECT pg_try_advisory_lock(hashtextextended(%s, 0))",
                                (f"faultline:cluster:{self.cluster}",)).fetchone()[0]
        try:
            poll_until(f"the lock of cluster {self.cluster}", locked, wait_s, poll_s)
        except PollTimeout:
            conn.close()
            who = holder(sessions, self.cluster)
            raise ClusterBusy(f"cluster {self.cluster} is busy: {who}; "
                              "one experiment per cluster at a time") from None
        self._conn = conn
        return self

    def release(self) -> None:
        if self._conn is not None:
            self._conn.close()  # a session lock ends with its session
            self._conn = None

    @property
    def held(self) -> bool:
        return self._conn is not None


def holder(sessions: sessionmaker[Session], cluster: str) -> str:
    """Which run seems to hold the cluster, in words."""
    with sessions() as session:
        run = session.execute(select(Run).where(Run.cluster == cluster, Run.status == "running")
                              .order_by(Run.id.desc()).limit(1)).scalar_one_or_none()
    if run is None:
        return "another run is starting on it"
    return (f"run {run.id} ({run.title}) is running on it since "
            f"{run.started_at:%Y-%m-%d %H:%M:%S %Z}")
