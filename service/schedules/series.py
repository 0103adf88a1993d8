"""The series of a schedule, night after night, for its trend charts.

A series is the runs of one schedule on one cluster with one experiment file (as
service.schedules.services.series and the verdicts define it). Each night carries its judged
figures (service.results.regression.DEFAULT_RULES), its verdict and, for a regression or a
failure, the reasons and which figures they name, so a chart can mark the night.
Runs still queued or running, and cancelled ones, are not nights yet.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from service.results.regression import DEFAULT_RULES
from service.store.models import Run

from .services import get

NOT_NIGHTS = ("queued", "running", "cancelled")
FLAGGED = ("regression", "failure")
FIGURES = tuple({"key": r.key, "label": r.label, "unit": r.unit} for r in DEFAULT_RULES)


def schedule_series(session: Session, schedule_id: int) -> list[dict[str, Any]]:
    """Every series of the schedule (ScheduleNotFound for an unknown one), oldest night
    first: {"cluster", "experiment", "nights", "figures", "flagged"}."""
    get(session, schedule_id)
    runs = session.execute(select(Run).where(Run.schedule_id == schedule_id,
                                             Run.status.not_in(NOT_NIGHTS))
                           .order_by(Run.id)).scalars()
    series: dict[tuple[str, str | None], list[dict[str, Any]]] = {}
    for run in runs:
        series.setdefault((run.cluster, run.experiment_path), []).append(night(run))
    return [{"cluster": cluster, "experiment": experiment, "nights": nights,
             "figures": list(FIGURES),
             "flagged": sum(1 for n in nights if n["verdict"] in FLAGGED)}
            for (cluster, experiment), nights in sorted(series.items(),
                                                        key=lambda kv: (kv[0][0], kv[0][1] or ""))]


def night(run: Run) -> dict[str, Any]:
    """One run of a series: its figures, verdict and the reasons of a flagged verdict."""
    figures = run.figures or {}
    verdict = run.verdict or {}
    findings = verdict.get("findings") or []
    when = run.started_at or run.queued_at
    return {
        "run_id": run.id, "status": run.status,
        "at": when.isoformat() if when else None,
        "label": f"{when:%Y-%m-%d %H:%M} · run {run.id}" if when else f"run {run.id}",
        "values": {f["key"]: figures.get(f["key"]) for f in FIGURES},
        "verdict": verdict.get("status"), "summary": verdict.get("summary"),
        "reasons": [f.get("reason") for f in findings if f.get("reason")]
        or ([verdict["summary"]] if verdict.get("status") in FLAGGED and verdict.get("summary")
            else []),
        "flagged_figures": sorted({f.get("figure") for f in findings if f.get("figure")}),
    }


def last_verdicts(session: Session) -> dict[int, dict[str, Any]]:
    """The latest judged run of each schedule: {schedule id: {"run_id", "status", "summary"}}."""
    latest = (select(Run.schedule_id, func.max(Run.id).label("run_id"))
              .where(Run.schedule_id.is_not(None), Run.verdict.is_not(None))
              .group_by(Run.schedule_id).subquery())
    rows = session.execute(select(Run).join(latest, Run.id == latest.c.run_id)).scalars()
    return {r.schedule_id: {"run_id": r.id, "status": r.verdict.get("status"),
                            "summary": r.verdict.get("summary")} for r in rows}
