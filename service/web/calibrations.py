"""Calibrations: the list, and a calibration's page with its stages, its knee, throughput
against latency and a response-time CDF per stage (from `/calibrations/<id>/chart.json`)."""

from __future__ import annotations

from flask import Blueprint, Flask, abort, jsonify, render_template

from service.results import calibration_report as report
from service.results.exceptions import CalibrationNotFound

from .context import sessions

bp = Blueprint("calibrations", __name__)


@bp.get("/calibrations")
def index():
    with sessions()() as session:
        rows = [report.calibration_dict(row) for row in report.recent(session)]
    return render_template("calibrations.html", calibrations=rows)


@bp.get("/calibrations/<int:calibration_id>")
def show(calibration_id: int):
    with sessions()() as session:
        data = report.calibration_dict(_found(session, calibration_id))
    return render_template("calibration.html", cal=data, made_on=report.made_on(data),
                           knee_rule=report.KNEE_RULE)


@bp.get("/calibrations/<int:calibration_id>/chart.json")
def chart(calibration_id: int):
    with sessions()() as session:
        return jsonify(report.chart_data(_found(session, calibration_id)))


def _found(session, calibration_id: int):
    try:
        return report.load(session, calibration_id)
    except CalibrationNotFound as exc:
        abort(404, description=str(exc))


def init_app(app: Flask) -> None:
    app.register_blueprint(bp)
