"""The comparison page: runs side by side, throughput overlaid from each run's fault.

`/compare?runs=1,2,3` (or `?runs=1&runs=2`, as the run list's form sends it).
The chart reads each run's `/runs/<id>/series.json`; the figures table and the
caveats come from service.results.comparison.
"""

from __future__ import annotations

from flask import Blueprint, Flask, abort, current_app, render_template, request, url_for

from service.results.comparison import CompareError, compare, parse_run_ids
from service.results.figures import RunNotFound

bp = Blueprint("compare", __name__)


@bp.get("/compare")
def show():
    try:
        run_ids = parse_run_ids(request.args.getlist("runs"))
        with current_app.extensions["faultline.sessions"]() as session:
            data = compare(session, run_ids)
    except RunNotFound as exc:
        abort(404, description=str(exc))
    except CompareError as exc:
        abort(400, description=str(exc))
    series = [{"run_id": e["run_id"], "url": url_for("runs.series", run_id=e["run_id"]),
               "label": f"run {e['run_id']} · {e['cluster']} ({e['cluster_kind']}, {e['api']})"}
              for e in data["runs"]]
    return render_template("compare.html", data=data, series=series)


def init_app(app: Flask) -> None:
    app.register_blueprint(bp)
