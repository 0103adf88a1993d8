"""Downloadable reports: a run, or a comparison of runs, as one self-contained HTML file.

The file opens anywhere, offline, long after the dashboard is gone: Chart.js and its
annotation plugin (read from the npm install, service/web/node_modules) and the
dashboard's own chart code are inlined, the data is embedded as JSON, and nothing refers
to this server or to another site. `/runs/<id>/report.html`, `/compare/report.html?runs=1,2`.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

from flask import Blueprint, Flask, Response, abort, render_template, request
from markupsafe import Markup

from service.results.comparison import CompareError, compare
from service.results.figures import RunNotFound, get_run
from service.results.report import FIGURE_KEYS, report_dict
from service.results.series import run_series

from .assets import ASSETS, VENDOR_FILES
from .compare import parse_run_ids
from .context import sessions

bp = Blueprint("reports", __name__)

STATIC = Path(__file__).resolve().parent / "static"
SCRIPT_END = re.compile(r"</(script)", re.IGNORECASE)


def inline_scripts() -> Markup:
    """The chart libraries and charts.js as inline <script> elements."""
    files = [ASSETS / VENDOR_FILES["chart.umd.js"],
             ASSETS / VENDOR_FILES["chartjs-plugin-annotation.min.js"], STATIC / "charts.js"]
    parts = []
    for path in files:
        text = SCRIPT_END.sub(r"<\\/\1", path.read_text(encoding="utf-8"))
        parts.append(f"<script>/* {path.name} */\n{text}\n</script>")
    return Markup("\n".join(parts))


def _attachment(html: str, filename: str) -> Response:
    response = Response(html, mimetype="text/html")
    response.headers["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def _generated() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")


@bp.get("/runs/<int:run_id>/report.html")
def run_report(run_id: int):
    with sessions()() as session:
        try:
            run = get_run(session, run_id)
        except RunNotFound as exc:
            abort(404, description=str(exc))
        data = report_dict(run)
        series = run_series(session, run_id)
        verdict, path = run.verdict, run.experiment_path
    html = render_template("report_run.html", run=data, series=series, verdict=verdict,
                           experiment_path=path, figure_keys=FIGURE_KEYS,
                           scripts=inline_scripts(), generated=_generated())
    return _attachment(html, f"faultline-run-{run_id}.html")


@bp.get("/compare/report.html")
def compare_report():
    try:
        run_ids = parse_run_ids(request.args.getlist("runs"))
        with sessions()() as session:
            data = compare(session, run_ids)
            series = [run_series(session, e["run_id"]) for e in data["runs"]]
    except RunNotFound as exc:
        abort(404, description=str(exc))
    except CompareError as exc:
        abort(400, description=str(exc))
    labels = [{"label": f"run {e['run_id']} · {e['cluster']} ({e['cluster_kind']}, {e['api']})"}
              for e in data["runs"]]
    html = render_template("report_compare.html", data=data, series=series, labels=labels,
                           scripts=inline_scripts(), generated=_generated())
    ids = "-".join(str(i) for i in data["run_ids"])
    return _attachment(html, f"faultline-compare-{ids}.html")


def init_app(app: Flask) -> None:
    app.register_blueprint(bp)
