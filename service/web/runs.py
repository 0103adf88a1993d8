"""Run history, the run page (live while the run is queued or running), its time series as
JSON, and cancelling a run.

The page polls `/runs/<id>/series.json` every 2 s while the run is queued or running and
reloads itself once the run has ended, so the figures, the verdict and the journal appear.
Cancel asks the queue (service.jobs.run_queue.cancel): a queued run never starts, a running one
is interrupted and its rollbacks run.
"""

from __future__ import annotations

import json
import math

from flask import (
    Blueprint,
    Flask,
    abort,
    flash,
    jsonify,
    redirect,
    render_template,
    request,
    url_for,
)

from service.jobs.run_queue import QueueError, cancel
from service.results.consistency import consistency_of, consistency_rows, covered
from service.results.exceptions import RunQueryError
from service.results.figures import RunNotFound, get_run
from service.results.queries import (
    KINDS,
    STATUSES,
    RunFilter,
    clusters_seen,
    list_runs,
    report_row,
)
from service.results.report import FIGURE_KEYS, report_dict
from service.results.series import ACTIVE, MARKED, run_series, run_timeline
from service.runs.reaper import interrupt_dead_runs
from service.store.scrub import scrub_json

from .audit import note
from .context import queue_app, sessions

bp = Blueprint("runs", __name__)


@bp.get("/")
def index():
    try:
        # the search box ("text") matches the title, the file or the run id
        where = RunFilter(**{k: request.args.get(k, "").strip()
                             for k in ("status", "cluster", "kind")},
                          experiment=request.args.get("text", "").strip())
        where.check()
        page = request.args.get("page", "1")
        if not (page.isascii() and page.isdigit() and int(page) < 2**31):
            raise RunQueryError(f"page must be a number, not {page!r}")
        interrupt_dead_runs(sessions(), "the dashboard's runs list")  # a run whose process died
        found = list_runs(sessions(), where, int(page), row=report_row)
        with sessions()() as session:
            known = clusters_seen(session)
    except RunQueryError as exc:
        abort(400, description=str(exc))
    links = {("text" if k == "experiment" else k): v for k, v in where.as_dict().items()}
    return render_template("runs.html", runs=found.items, found=found, where=where,
                           links=links, statuses=STATUSES, kinds=KINDS, clusters=known)


@bp.get("/runs/<int:run_id>")
def show(run_id: int):
    with sessions()() as session:
        run = _run_or_404(session, run_id)
        data = report_dict(run)
        extra = {"experiment_path": run.experiment_path, "requested_by": run.requested_by,
                 "queued_at": run.queued_at.isoformat() if run.queued_at else None,
                 "schedule_id": run.schedule_id, "verdict": run.verdict,
                 "journal": json.dumps(scrub_json(run.journal), indent=2, sort_keys=True)
                 if run.journal is not None else None}
        timeline = run_timeline(session, run)  # the charts load their points themselves
    checked = consistency_of(data["verify"])
    return render_template("run.html", run=data, extra=extra, events=timeline["events"],
                           figure_keys=FIGURE_KEYS, origin=timeline["origin"],
                           live=run.status in ACTIVE, marked=MARKED,
                           consistency=consistency_rows(data["verify"]),
                           consistency_covered=covered(checked) if checked else None)


@bp.get("/runs/<int:run_id>/series.json")
def series(run_id: int):
    """Per-second ops, errors and p99 (summed over op types), the cluster's recovery
    (Ceph degraded and misplaced objects, active+clean PGs; Swift dispersion and handoff
    partitions), the events, and the run's status. `?since=<epoch seconds>`: only the
    load and cluster points after it (service.results.series)."""
    since = request.args.get("since")
    try:
        since = float(since) if since else None
        if since is not None and not math.isfinite(since):
            raise ValueError
    except ValueError:
        abort(400, description=f"since must be a time in epoch seconds, not {since!r}")
    with sessions()() as session:
        try:
            return jsonify(run_series(session, run_id, since))
        except RunNotFound as exc:
            abort(404, description=str(exc))


@bp.post("/runs/<int:run_id>/cancel")
def cancel_run(run_id: int):
    try:
        with queue_app() as queue:
            outcome = cancel(sessions(), queue, run_id)
    except RunNotFound as exc:
        abort(404, description=str(exc))
    except QueueError as exc:
        abort(409, description=str(exc))
    note("run.cancel", f"run {run_id}", {"outcome": outcome})
    flash(f"run {run_id}: {outcome}" + (" (its rollbacks run)" if outcome == "cancelling"
                                        else ""))
    return redirect(url_for("runs.show", run_id=run_id))


def _run_or_404(session, run_id: int):
    try:
        return get_run(session, run_id)
    except RunNotFound as exc:
        abort(404, description=str(exc))


def init_app(app: Flask) -> None:
    app.register_blueprint(bp)
