"""Small factories for stored runs: a Run with its fault events and per-second load."""

from __future__ import annotations

from typing import Any

from sqlalchemy import delete, select, text
from sqlalchemy.orm import Session, sessionmaker

from clusters.processes import ProcessOwner
from service.accounts.models import AuditEvent
from service.store.models import Event, LoadSample, Run, Schedule, UploadedExperiment

START = 1_700_000_000.0
WORKLOAD = {"rate": 100, "object_size": 4096, "mix": {"read": 80, "write": 15, "delete": 5},
            "ramp_s": 0}


def make_run(session: Session, *, kind: str = "ceph", cluster: str | None = None,
             title: str = "kill one process", status: str = "completed",
             figures: dict[str, Any] | None = None, workload: dict[str, Any] | None = None,
             fault: str | None = "kill-osd", dip_ops: int = 0, seconds: int = 60,
             error: str | None = None, load_api: str | None = None,
             owner: ProcessOwner | None = None) -> Run:
    """A finished run: `seconds` of 100 ops/s read load, the fault at 30 s (3 s at
    `dip_ops`), restored at 45 s. Committed, since the app and the CLI read it. A running
    one is run by `owner` (default this process, alive: the runs lists leave it running)."""
    run = Run(title=title, cluster=cluster or f"lab-{kind}", cluster_kind=kind, status=status,
              load_api=load_api, workload=dict(workload or WORKLOAD), figures=figures,
              error=error)
    if status == "running":
        owner = owner or ProcessOwner.current()
        run.owner_pid, run.owner_host, run.owner_start = owner.pid, owner.host, owner.start
    session.add(run)
    session.flush()
    record_load(session, run, fault=fault, dip_ops=dip_ops, seconds=seconds)
    session.commit()
    return run


def record_load(session: Session, run: Run, *, fault: str | None = "kill-osd",
                dip_ops: int = 0, seconds: int = 60) -> None:
    """Record make_run's load, fault and restore on a run (not committed)."""
    run.load_started_ts, run.fault_ts = START, START + 30.0 if fault else None
    for s in range(seconds):
        ops = dip_ops if fault and 30 <= s < 33 else 100
        session.add(LoadSample(run_id=run.id, ts=START + s, op="read", ops=ops,
                               bytes=ops * 4096, errors=0, errors_by_class={}, missed=0,
                               histogram=""))
    if fault:
        session.add(Event(run_id=run.id, ts=run.fault_ts, kind="fault_injected",
                          detail={"name": fault}))
        session.add(Event(run_id=run.id, ts=START + 45.0, kind="restored",
                          detail={"name": "restore"}))


def figures(**values: Any) -> dict[str, Any]:
    """A run's stored figures: the given values, every other figure None with a reason."""
    from service.results.report import FIGURE_KEYS

    out: dict[str, Any] = {k: values.get(k) for k in FIGURE_KEYS}
    out.update({k: v for k, v in values.items() if k not in FIGURE_KEYS})
    out["reasons"] = {k: f"{k} was not measured in this test" for k in FIGURE_KEYS
                      if out[k] is None}
    return out


def delete_made_by(sessions: sessionmaker[Session], names: list[str]) -> None:
    """Delete the runs (with their queued jobs), schedules and uploaded experiments that
    these API users made, and their audit events."""
    with sessions.begin() as session:
        jobs = session.execute(select(Run.job_id).where(Run.requested_by.in_(names),
                                                        Run.job_id.is_not(None))).scalars().all()
        session.execute(text("DELETE FROM procrastinate_jobs WHERE id = ANY(:ids)"),
                        {"ids": list(jobs)})
        session.execute(delete(Run).where(Run.requested_by.in_(names)))
        session.execute(delete(Schedule).where(Schedule.created_by.in_(names)))
        session.execute(delete(UploadedExperiment)
                        .where(UploadedExperiment.uploaded_by.in_(names)))
        session.execute(delete(AuditEvent).where(AuditEvent.actor.in_(names)))
