"""Write a run and what it records into PostgreSQL, in batches (never one row per op)."""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import func, insert, select, update
from sqlalchemy.orm import Session, sessionmaker

from clusters.processes import ProcessOwner
from loadgen.ledger import Entry
from loadgen.samples import Sample, merge_histograms

from .exceptions import RunNotQueued
from .models import ClusterSample, Event, LedgerEntry, LoadSample, Run
from .scrub import scrub, scrub_json


class RunRecorder:
    """Owns one run row; thread-safe, since load, sampler and control all record."""

    def __init__(self, sessions: sessionmaker[Session], run_id: int,
                 one_of_several: bool = False):
        """`one_of_several`: this records one of several load drivers of the run, whose
        seconds hold only part of each second's operations."""
        self.sessions = sessions
        self.run_id = run_id
        self.one_of_several = one_of_several
        self._lock = threading.Lock()

    @classmethod
    def create(cls, sessions: sessionmaker[Session], *, title: str, cluster: str,
               cluster_kind: str, workload: dict[str, Any], load_api: str | None = None,
               experiment_path: str | None = None) -> RunRecorder:
        with sessions.begin() as session:
            run = Run(title=title, cluster=cluster, cluster_kind=cluster_kind,
                      load_api=load_api, workload=workload, experiment_path=experiment_path,
                      status="running", **owned_by_this_process())
            session.add(run)
            session.flush()
            run_id = run.id
        return cls(sessions, run_id)

    @classmethod
    def start_queued(cls, sessions: sessionmaker[Session], run_id: int,
                     **values: Any) -> RunRecorder:
        """Take over a run the queue made: it turns from queued to running."""
        with sessions.begin() as session:
            done = session.execute(
                update(Run).where(Run.id == run_id, Run.status == "queued")
                .values(status="running", started_at=datetime.now(UTC),
                        **owned_by_this_process(), **values))
            if done.rowcount != 1:
                raise RunNotQueued(f"run {run_id} is not waiting in the queue "
                                   "(cancelled, or started elsewhere)")
        return cls(sessions, run_id)

    def update(self, **values: Any) -> None:
        with self._lock, self.sessions.begin() as session:
            session.execute(update(Run).where(Run.id == self.run_id).values(**values))

    def beat(self) -> None:
        """Say that the run's process is alive (its heartbeat), in the database's time.
        Not behind the recorder's lock: a long write of samples must not silence it."""
        with self.sessions.begin() as session:
            session.execute(update(Run).where(Run.id == self.run_id, Run.status == "running")
                            .values(owner_seen_at=func.now()))

    def event(self, kind: str, ts: float | None = None, **detail: Any) -> None:
        with self._lock, self.sessions.begin() as session:
            session.add(Event(run_id=self.run_id, ts=ts or time.time(), kind=kind,
                              detail=detail))

    def load_samples(self, samples: list[Sample]) -> None:
        """Every op type of a second comes in the same batch (loadgen.samples hands out
        whole seconds), so the second's p50 and p99 over all of them are merged here, once."""
        # one driver of several has part of each second: its percentiles are not the second's
        merged = {} if self.one_of_several else second_percentiles_ms(samples)
        rows = [{"run_id": self.run_id, "ts": s.ts, "op": s.op, "ops": s.ops,
                 "bytes": s.bytes, "errors": s.error_count, "errors_by_class": s.errors,
                 "missed": s.missed, "p50_ms": s.p50_ms, "p99_ms": s.p99_ms,
                 "max_ms": s.max_ms, "histogram": s.histogram,
                 "second_p50_ms": merged.get(s.ts, (None, None))[0],
                 "second_p99_ms": merged.get(s.ts, (None, None))[1]} for s in samples]
        if rows:
            with self._lock, self.sessions.begin() as session:
                session.execute(insert(LoadSample), rows)

    def cluster_samples(self, samples: list[tuple[float, str, dict[str, Any]]]) -> None:
        rows = [{"run_id": self.run_id, "ts": ts, "health": health, "state": state}
                for ts, health, state in samples]
        if rows:
            with self._lock, self.sessions.begin() as session:
                session.execute(insert(ClusterSample), rows)

    def ledger(self, entries: list[Entry]) -> None:
        rows = [{"run_id": self.run_id, "container": e.container, "name": e.name,
                 "size": e.size, "version": e.version} for e in entries]
        with self._lock, self.sessions.begin() as session:
            for i in range(0, len(rows), 5000):
                session.execute(insert(LedgerEntry), rows[i:i + 5000])

    def finish(self, status: str, **values: Any) -> None:
        """End the run; its journal and error are stored scrubbed of secrets (an experiment's
        output is every viewer's to read)."""
        if values.get("journal") is not None:
            values["journal"] = scrub_json(values["journal"])
        if values.get("error"):
            values["error"] = scrub(values["error"])
        self.update(status=status, ended_at=datetime.now(UTC), **values)


def owned_by_this_process() -> dict[str, Any]:
    """A run's owner columns: this process runs it, and is alive now."""
    owner = ProcessOwner.current()
    return {"owner_pid": owner.pid, "owner_host": owner.host, "owner_start": owner.start,
            "owner_seen_at": func.now()}


def second_percentiles_ms(samples: list[Sample]) -> dict[float, tuple[float, float]]:
    """The (p50, p99) of each second over its op types' merged histograms (exact, as
    service.results.series would merge them); seconds without a completed op are left out."""
    by_second: dict[float, list[str]] = defaultdict(list)
    for s in samples:
        if s.histogram:
            by_second[s.ts].append(s.histogram)
    merged = {ts: merge_histograms(blobs) for ts, blobs in by_second.items()}
    return {ts: (h.get_value_at_percentile(50) / 1000, h.get_value_at_percentile(99) / 1000)
            for ts, h in merged.items()}


def load_ledger(session: Session, run_id: int) -> list[Entry]:
    rows = session.execute(select(LedgerEntry.container, LedgerEntry.name, LedgerEntry.size,
                                  LedgerEntry.version)
                           .where(LedgerEntry.run_id == run_id)).all()
    return [Entry(c, n, s, v) for c, n, s, v in rows]


def fail_queued(sessions: sessionmaker[Session], run_id: int, message: str,
                status: str = "failed") -> bool:
    """A queued run that could not start: failed (or `status`, e.g. invalid), with the
    reason. False if it had moved on."""
    with sessions.begin() as session:
        done = session.execute(update(Run).where(Run.id == run_id, Run.status == "queued")
                               .values(status=status, error=scrub(message),
                                       ended_at=datetime.now(UTC)))
        return done.rowcount == 1


def stamp_trial(sessions: sessionmaker[Session], run_id: int, group: str, index: int,
                trials: int) -> None:
    """Make a run trial `index` of `trials` of one group (compared with its spread)."""
    with sessions.begin() as session:
        session.execute(update(Run).where(Run.id == run_id).values(
            trial_group=group, trial_index=index, trials=trials))
