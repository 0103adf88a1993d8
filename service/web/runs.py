"""Run list, run page and the run's time series as JSON."""

from __future__ import annotations

from flask import Blueprint, Flask, abort, current_app, jsonify, render_template
from sqlalchemy import select

from .. import run_series
from ..figures import RunNotFound, get_run
from ..models import Run
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
    try:
        return jsonify(run_series.series(current_app.extensions["faultline.sessions"], run_id))
    except RunNotFound as exc:
        abort(404, description=str(exc))


def init_app(app: Flask) -> None:
    app.register_blueprint(bp)
