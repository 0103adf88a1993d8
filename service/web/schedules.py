"""Schedules: the list (next run, last verdict), creating one, enabling, disabling and
deleting it, and its series: each judged figure night after night, regressions marked.

Every change goes through service.schedules.services, which checks everything a slot will need
(the cron expression and time zone, the experiment or suite, the clusters, the workload)
before it stores anything: bad input gives the form again with the message and a 400.
"""

from __future__ import annotations

import json
from typing import Any

from chaoslib.exceptions import ChaosException
from flask import (
    Blueprint,
    Flask,
    abort,
    flash,
    redirect,
    render_template,
    request,
    url_for,
)
from flask_login import current_user

from clusters.exceptions import ClusterError, InventoryError
from loadgen.exceptions import LoadError
from service.experiments.catalogue import CatalogueError, experiment, suite, suites
from service.experiments.catalogue import experiments as all_experiments
from service.experiments.documents import ExperimentError
from service.experiments.preflight import PreflightError
from service.experiments.suites import SuiteError
from service.schedules import services as service
from service.schedules.series import last_verdicts, schedule_series
from service.schedules.slots import ScheduleError

from .audit import note
from .context import clusters, experiments_dir, inventory, sessions
from .errors import form_status

bp = Blueprint("schedules", __name__)

SCHEDULE_ERRORS = (ScheduleError, ExperimentError, SuiteError, PreflightError, ClusterError,
                   LoadError, CatalogueError, ChaosException)


@bp.get("/schedules")
def index():
    return _list({"timezone": "UTC", "workload": "{}"}, None)


@bp.post("/schedules")
def create():
    form = request.form
    values = {"name": form.get("name", "").strip(), "cron": form.get("cron", "").strip(),
              "timezone": form.get("timezone", "").strip() or "UTC",
              "experiment": form.get("experiment", ""), "suite": form.get("suite", ""),
              "clusters": form.getlist("clusters"), "workload": form.get("workload", "{}")}
    try:
        workload = _workload(values["workload"])
        schedule_id = service.create(
            sessions(), name=values["name"], cron=values["cron"], timezone=values["timezone"],
            experiment=experiment(values["experiment"], experiments_dir()).path
            if values["experiment"] else None,
            suite=suite(values["suite"], experiments_dir()).path if values["suite"] else None,
            clusters=values["clusters"], workload=workload, created_by=current_user.name,
            inventory=inventory())
    except SCHEDULE_ERRORS as exc:
        return _list(values, str(exc)), form_status(exc)
    note("schedule.create", f"schedule {schedule_id}", {"name": values["name"]})
    flash(f"schedule {schedule_id} ({values['name']}) created")
    return redirect(url_for("schedules.show", schedule_id=schedule_id))


@bp.get("/schedules/<int:schedule_id>")
def show(schedule_id: int):
    with sessions()() as session:
        try:
            schedule = service.describe(service.get(session, schedule_id))
        except service.ScheduleNotFound as exc:
            abort(404, description=str(exc))
        series = schedule_series(session, schedule_id)
    return render_template("schedule.html", schedule=schedule, series=series)


@bp.post("/schedules/<int:schedule_id>/enable")
def enable(schedule_id: int):
    return _change(schedule_id, True)


@bp.post("/schedules/<int:schedule_id>/disable")
def disable(schedule_id: int):
    return _change(schedule_id, False)


@bp.post("/schedules/<int:schedule_id>/delete")
def delete(schedule_id: int):
    try:
        service.delete(sessions(), schedule_id)
    except service.ScheduleNotFound as exc:
        abort(404, description=str(exc))
    note("schedule.delete", f"schedule {schedule_id}")
    flash(f"schedule {schedule_id} deleted; its runs stay")
    return redirect(url_for("schedules.index"))


def _change(schedule_id: int, enabled: bool):
    try:
        service.change(sessions(), schedule_id, inventory(), enabled=enabled)
    except service.ScheduleNotFound as exc:
        abort(404, description=str(exc))
    except SCHEDULE_ERRORS as exc:
        abort(400, description=f"schedule {schedule_id} cannot be "
                               f"{'enabled' if enabled else 'disabled'}: {exc}")
    note("schedule.enable" if enabled else "schedule.disable", f"schedule {schedule_id}")
    flash(f"schedule {schedule_id} {'enabled' if enabled else 'disabled'}")
    return redirect(url_for("schedules.index"))


def _workload(text: str) -> dict[str, Any]:
    try:
        workload = json.loads(text.strip() or "{}")
    except json.JSONDecodeError as exc:
        raise ScheduleError(f"the workload is not JSON: {exc}") from None
    if not isinstance(workload, dict):
        raise ScheduleError("the workload must be a JSON object of the fields to override, "
                            'e.g. {"rate": 100}')
    return workload


def _list(values: dict[str, Any], error: str | None):
    with sessions()() as session:
        rows = [service.describe(s) for s in service.all_schedules(session)]
        verdicts = last_verdicts(session)
    try:
        names = sorted(clusters())
    except InventoryError:
        names = []
    return render_template("schedules.html", schedules=rows, verdicts=verdicts, values=values,
                           error=error, experiments=all_experiments(experiments_dir()),
                           suites=suites(experiments_dir()), cluster_names=names)


def init_app(app: Flask) -> None:
    app.register_blueprint(bp)
