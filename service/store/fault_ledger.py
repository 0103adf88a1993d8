"""The fault ledger in PostgreSQL (table `faults`): the backend the service installs in
clusters.safety.fault_ledger, so every worker and `faultline heal` see the same faults.

Each call is its own short transaction, committed before it returns: a fault must be on
disk before it is injected, whatever the run's own sessions are doing.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import delete, select
from sqlalchemy.orm import Session, sessionmaker

from clusters.safety.fault_ledger import FaultEntry, set_backend

from .models import FaultRecord

FIELDS = ("id", "cluster", "key", "description", "restore", "arguments", "injected_at",
          "owner_pid", "owner_host", "run_id", "record")


class PgFaultLedger:
    """Faults as rows of `faults`. `run_id`, when set, is stamped on every fault recorded
    through clusters.safety.fault_ledger.record, linking it to the run that injected it."""

    def __init__(self, sessions: sessionmaker[Session], run_id: int | None = None) -> None:
        self.sessions = sessions
        self.run_id = run_id

    def add(self, entry: FaultEntry) -> None:
        with self.sessions.begin() as session:
            session.add(FaultRecord(**{name: getattr(entry, name) for name in FIELDS}))

    def strike(self, cluster: str, key: str) -> int:
        with self.sessions.begin() as session:
            done = session.execute(delete(FaultRecord).where(FaultRecord.cluster == cluster,
                                                             FaultRecord.key == key))
        return done.rowcount

    def outstanding(self, cluster: str | None = None) -> list[FaultEntry]:
        query = select(FaultRecord).order_by(FaultRecord.injected_at, FaultRecord.id)
        if cluster is not None:
            query = query.where(FaultRecord.cluster == cluster)
        with self.sessions() as session:
            rows = session.execute(query).scalars().all()
            # a row written before the record keeps it in its arguments: FaultEntry.read moves it
            return [FaultEntry.read(**{name: getattr(row, name) for name in FIELDS})
                    for row in rows]


def use_database_ledger(sessions: sessionmaker[Session],
                        run_id: int | None = None) -> PgFaultLedger:
    """Make this process record its faults in PostgreSQL (linked to `run_id` if given)."""
    ledger = PgFaultLedger(sessions, run_id)
    set_backend(ledger)
    return ledger


@contextmanager
def database_ledger(sessions: sessionmaker[Session],
                    run_id: int | None = None) -> Iterator[PgFaultLedger]:
    """The database ledger for the length of a block, then the default (file) one again."""
    ledger = use_database_ledger(sessions, run_id)
    try:
        yield ledger
    finally:
        set_backend(None)
