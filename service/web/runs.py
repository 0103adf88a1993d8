"""Run list, run page and the run's time series as JSON."""

from __future__ import annotations

from flask import Blueprint, Flask, abort, current_app, jsonify, render_template
from sqlalchemy import select

from loadgen.samples import merge_histograms

from ..figures import RunNotFound, get_run, seconds_of
from ..models import ClusterSample, Event, Run
from ..report import FIGURE_KEYS, report_dict

bp = Blueprint("runs", __name__)


def _session():
    return current_app.extensions["faultline.sessions"]()


def _run_or_404(session, run_id: int) -> Run:
    try:
        return get_run(session, run_id)
    except RunNotFound as exc:
        abort(404, description=str(exc))


@bp.get("/")
def index():
    with _session() as session:
        runs = session.execute(select(Run).order_by(Run.id.desc()).limit(200)).scalars().all()
        rows = [report_dict(r) for r in runs]
    return render_template("runs.html", runs=rows)


@bp.get("/runs/<int:run_id>")
def show(run_id: int):
    with _session() as session:
        run = _run_or_404(session, run_id)
        data = report_dict(run)
        origin = run.fault_ts or run.load_started_ts or 0.0
        events = [{"t": e.ts - origin, "kind": e.kind, "detail": e.detail} for e in run.events]
    return render_template("run.html", run=data, events=events, figure_keys=FIGURE_KEYS,
                           origin="the fault" if run.fault_ts else "the start of the load")


@bp.get("/runs/<int:run_id>/series.json")
def series(run_id: int):
    """Per-second ops, errors and p99 (summed over op types), cluster health, and events."""
    with _session() as session:
        run = _run_or_404(session, run_id)
        seconds = seconds_of(session, run_id)  # summed over op types, as the analysis sees it
        origin = run.fault_ts or run.load_started_ts or 0.0
        health = [{"t": round(c.ts - origin, 2), "health": c.health,
                   "degraded": c.state.get("degraded_objects"),
                   "dispersion_pct": (c.state.get("dispersion") or {}).get("object_pct"),
                   "handoffs": c.state.get("handoff_partitions")}
                  for c in session.execute(select(ClusterSample)
                                           .where(ClusterSample.run_id == run_id)
                                           .order_by(ClusterSample.ts)).scalars()]
        events = [{"t": round(e.ts - origin, 2), "kind": e.kind}
                  for e in session.execute(select(Event).where(Event.run_id == run_id)
                                           .order_by(Event.ts)).scalars()]
    load = [{"t": round(s.ts - origin, 2), "ops": s.ops, "errors": s.errors,
             "p99_ms": _p99_ms(s.histograms)} for s in seconds]
    return jsonify(origin="fault" if run.fault_ts else "load start", load=load,
                   cluster=health, events=events)


def _p99_ms(histograms: tuple[str, ...]) -> float | None:
    merged = merge_histograms(list(histograms))  # exact p99 over every op type
    return merged.get_value_at_percentile(99) / 1000 if merged.get_total_count() else None


def init_app(app: Flask) -> None:
    app.register_blueprint(bp)
