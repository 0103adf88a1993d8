"""Runs whose process died (SIGKILL, an OOM kill, a reboot): found by whatever looks first,
and closed as `interrupted` with what they recorded.

Whoever looks calls `interrupt_dead_runs`: the service as it starts, a worker as it starts,
`faultline run` and `faultline suite` before they start, `faultline heal`, the runs lists
(`faultline runs`, the dashboard's and the API's), and a worker's runner before it runs a
queued run. A worker whose run's process exits without closing its run calls
`interrupt_run` with the exit code.

Which runs are taken for dead (a live run never is, on this host):
- a run records its owner (service.store.recording): the process's PID, host and start
  (clusters.processes), and a heartbeat every 10 s (service.runs.heartbeat);
- on this host, a run is dead as soon as its process is gone (a zombie too), its PID runs a
  process that started later (a reused PID), or the host restarted since it began;
- on another host (or in another PID namespace, which /proc here cannot see), a run is dead
  once its heartbeat is older than STALE_AFTER_S (10 min: 60 missed beats, so a database
  away for a few minutes kills nothing); a run from before owners were recorded, once its
  last sample, event or start is that old. Should a live run on another host still be
  closed (it could not reach the database for 10 min), its own end overwrites the status.

What a closed run gets:
- `ended_at`: the time of its last recorded sample (load or cluster), else its start;
- `error`: what happened in plain words, e.g. "its process (pid 4242 on node7) died; last
  sample at 2026-11-25 10:32:07 UTC; any fault it left is in the fault ledger: `faultline
  heal`";
- `figures`: computed from what was recorded (service.results.figures), as at the end of a
  run; lost and corrupt objects are null, since no verify phase ran. A run that died
  during its fault's action, or the pause after it, has no fault time yet: it is the time
  the action began (its `fault_started` event), as the control itself does for a run
  interrupted there;
- an `interrupted` event at `ended_at` (the cause, who found it and when), and the figures'
  milestones (cluster noticed, clients recovered, fully redundant) as a run that ends has.

Two finders at once close a run once: each takes the row with SELECT ... FOR UPDATE SKIP
LOCKED WHERE status = 'running', and judges it again under the lock.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from clusters.processes import ALIVE, ELSEWHERE, GONE, REBOOTED, REUSED, ProcessOwner
from service.results import figures
from service.store.models import ClusterSample, Event, LoadSample, Run

logger = logging.getLogger(__name__)

STALE_AFTER_S = 600.0
NO_VERIFY = "the run's process died before its verify phase"
FAULT_NOTE = ("the run's process died during the fault's action or the pause after it: this "
              "is when the action began, and the fault may be partial")


@dataclass(frozen=True)
class Interruption:
    """A run closed as interrupted, and why."""

    run_id: int
    error: str


def interrupt_dead_runs(sessions: sessionmaker[Session], found_by: str) -> list[Interruption]:
    """Close every running run whose process died; `found_by` names the caller on the run's
    timeline ("faultline heal"). One query when no run is running."""
    with sessions() as session:
        running = session.execute(select(Run, func.now()).where(Run.status == "running")).all()
        suspects = [run.id for run, now in running if _cause(session, run, now) is not None]
    closed = []
    for run_id in suspects:
        with sessions.begin() as session:
            run, now = _take(session, run_id)
            cause = _cause(session, run, now) if run is not None else None
            if cause is not None:
                closed.append(_close(session, run, cause, found_by))
    for interruption in closed:
        logger.warning(f"run {interruption.run_id} interrupted: {interruption.error}")
    return closed


def interrupt_run(sessions: sessionmaker[Session], run_id: int, how: str,
                  found_by: str) -> Interruption | None:
    """Close one run whose process is known to have ended, `how` ("was killed by SIGKILL");
    None if the run is not running (any more)."""
    with sessions.begin() as session:
        run, _ = _take(session, run_id)
        if run is None:
            return None
        return _close(session, run, f"{_process(_owner(run))} {how}", found_by)


def cause_of_death(owner: ProcessOwner | None, state: str | None,
                   silent_s: float | None) -> str | None:
    """Why a running run is taken for dead, in plain words; None while it may be alive.

    `state`: its owner's, as clusters.processes sees it from here (None: no owner);
    `silent_s`: for how long it gave no sign of life (its heartbeat, else its records)."""
    process = _process(owner)
    if state == ALIVE:
        return None
    if state == GONE:
        return f"{process} died"
    if state == REUSED:
        return f"{process} died (the pid now belongs to a later process)"
    if state == REBOOTED:
        return f"{process} died: {owner.host} was restarted since it began"
    if silent_s is None or silent_s < STALE_AFTER_S:
        return None
    if owner is None:
        return (f"it gave no sign of life for {_duration(silent_s)} (it began before runs "
                "recorded their process)")
    return f"{process} gave no sign of life for {_duration(silent_s)}"


def _take(session: Session, run_id: int) -> tuple[Run | None, datetime | None]:
    """The run, locked, if it is still running and no other finder holds it."""
    row = session.execute(select(Run, func.now())
                          .where(Run.id == run_id, Run.status == "running")
                          .with_for_update(of=Run, skip_locked=True)).first()
    return (row[0], row[1]) if row is not None else (None, None)


def _owner(run: Run) -> ProcessOwner | None:
    if run.owner_pid is None or not run.owner_host:
        return None
    return ProcessOwner(run.owner_pid, run.owner_host, run.owner_start)


def _process(owner: ProcessOwner | None) -> str:
    return f"its process (pid {owner.pid} on {owner.host})" if owner is not None \
        else "its process"


def _cause(session: Session, run: Run, now: datetime) -> str | None:
    owner = _owner(run)
    state = owner.state() if owner is not None else None
    if state not in (None, ELSEWHERE):
        return cause_of_death(owner, state, None)
    if run.owner_seen_at is not None:
        silent_s = (now - run.owner_seen_at).total_seconds()
    else:  # a run from before heartbeats: its last record
        signs = [run.started_at.timestamp(), _last_sample_ts(session, run.id) or 0.0,
                 session.execute(select(func.max(Event.ts))
                                 .where(Event.run_id == run.id)).scalar() or 0.0]
        silent_s = now.timestamp() - max(signs)
    return cause_of_death(owner, state, silent_s)


def _close(session: Session, run: Run, cause: str, found_by: str) -> Interruption:
    last = _last_sample_ts(session, run.id)
    ended = last if last is not None else run.started_at.timestamp()
    error = (f"{cause}; " + (f"last sample at {_utc(last)}" if last is not None
                             else "no sample was recorded")
             + "; any fault it left is in the fault ledger: `faultline heal`")
    if run.fault_ts is None:
        _fault_from_its_start(session, run)
    result = _figures(session, run)
    if result is None:
        error += "; its figures could not be computed (see the log)"
    run.status, run.error, run.figures = "interrupted", error, result
    run.ended_at = datetime.fromtimestamp(ended, UTC)
    run.metrics_url = None  # its driver's /metrics died with it
    session.add(Event(run_id=run.id, ts=ended, kind="interrupted",
                      detail={"cause": cause, "found_by": found_by, "found_at": time.time()}))
    for kind, ts in figures.milestones(run.fault_ts, result or {}):
        session.add(Event(run_id=run.id, ts=ts, kind=kind, detail={}))
    return Interruption(run.id, error)


def _fault_from_its_start(session: Session, run: Run) -> None:
    """A fault action that began and never reported: the fault counts from its beginning."""
    started = session.execute(select(Event).where(Event.run_id == run.id,
                                                  Event.kind == "fault_started")
                              .order_by(Event.ts.desc()).limit(1)).scalar()
    failed = session.execute(select(func.count(Event.id)).where(
        Event.run_id == run.id, Event.kind == "fault_failed")).scalar()
    if started is None or failed:
        return
    run.fault_ts = started.ts
    session.add(Event(run_id=run.id, ts=started.ts, kind="fault_injected",
                      detail={"name": started.detail.get("name"), "note": FAULT_NOTE}))
    session.flush()


def _figures(session: Session, run: Run) -> dict[str, Any] | None:
    try:
        result = figures.compute(session, run.id)
    except Exception:  # whatever it recorded, the run must still be closed
        logger.exception(f"run {run.id}: its figures could not be computed")
        return None
    if run.verify is None:
        result["reasons"]["lost_objects"] = result["reasons"]["corrupt_objects"] = NO_VERIFY
    return result


def _last_sample_ts(session: Session, run_id: int) -> float | None:
    stamps = [session.execute(select(func.max(table.ts)).where(table.run_id == run_id))
              .scalar() for table in (LoadSample, ClusterSample)]
    return max((ts for ts in stamps if ts is not None), default=None)


def _utc(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _duration(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600)):
        if seconds >= 2 * size:
            return f"{seconds / size:.0f} {unit}"
    return f"{seconds / 60:.0f} min"
