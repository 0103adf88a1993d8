"""The experiment catalogue and the trigger form.

`/experiments` lists the experiment files and the suites; `/experiments/<name>/run` shows
a form (a cluster of the experiment's kind, the workload pre-filled from the file, and a
confirmation that names the blast radius: what each fault takes down on the chosen
cluster). Posting it (an operator) checks the run and queues it through
service.jobs.run_queue.enqueue: the web process never runs an experiment, a worker does. Bad
input (an unknown cluster, a workload out of range, no confirmation) gives the form again
with the message and a 400, and queues nothing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

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

from clusters.exceptions import InventoryError
from loadgen.workload import ALL_OPS, MORE_OPS, OPS
from service.experiments import documents
from service.experiments.catalogue import CatalogueError, ExperimentEntry, experiment, suites
from service.experiments.catalogue import experiments as all_experiments
from service.experiments.fault_scope import GUARD_NOTE, fault_scopes
from service.jobs.run_queue import enqueue

from .audit import note
from .context import clusters, experiments_dir, inventory, queue_app, sessions
from .errors import REQUEST_ERRORS, FormError, form_status

bp = Blueprint("catalogue", __name__)

# the form's workload fields: (name, label, type); the mix is three fields of its own
def _rate(text: str) -> float | str:
    """ops/s, or a share of the calibrated capacity ("50%", checked by parse_workload)."""
    return text if text.endswith("%") else float(text)


FIELDS = (("rate", "rate (ops/s, or a % of the calibrated capacity)", _rate),
          ("object_size", "object size (bytes)", int),
          ("containers", "containers", int),
          ("objects_per_container", "objects per container", int),
          ("baseline_s", "baseline window (s)", float))
MIX = ALL_OPS  # read, write, delete, then the operations a mix may leave out (MORE_OPS)


@bp.get("/experiments")
def index():
    return render_template("experiments.html", experiments=all_experiments(experiments_dir()),
                           suites=suites(experiments_dir()))


@bp.route("/experiments/<name>/run", methods=["GET", "POST"])
def trigger(name: str):
    entry = _entry_or_404(name)
    try:
        targets = _targets(entry)
        inventory_error = None
    except InventoryError as exc:
        targets, inventory_error = [], str(exc)
    if request.method == "GET":
        return _form(entry, targets, _defaults(entry), None, inventory_error)
    values = dict(request.form)
    try:
        workload = parse_form(request.form)
        cluster = request.form.get("cluster", "").strip()
        if not cluster:
            raise FormError("choose a cluster")
        target = next((t for t in targets if t["name"] == cluster), None)
        if target is None:
            known = ", ".join(t["name"] for t in targets) or "none"
            raise FormError(f"unknown cluster {cluster!r} for {entry.name} (clusters of kind "
                            f"{entry.system or 'any'} in {inventory()}: {known})")
        if request.form.get("confirm") != "yes":
            raise FormError(f"tick the confirmation: this run {_fault_words(target)} on "
                            f"{cluster}")
        document = documents.load(entry.path)
        with queue_app() as queue:
            run_id = enqueue(sessions(), queue, document, cluster=cluster,
                             inventory=inventory(), experiment_path=entry.path,
                             workload=workload, requested_by=current_user.name,
                             role=current_user.role)
    except REQUEST_ERRORS as exc:
        return _form(entry, targets, values, str(exc), inventory_error), form_status(exc)
    note("run.queue", f"run {run_id}", {"experiment": entry.name, "cluster": cluster,
                                        "workload": workload})
    flash(f"run {run_id} queued on {cluster}: a worker starts it when the cluster is free")
    return redirect(url_for("runs.show", run_id=run_id))


def parse_form(form) -> dict[str, Any]:
    """The workload overrides the form gives; their ranges are service.jobs.run_queue's to check
    (loadgen.workload.parse_workload), with its messages."""
    workload: dict[str, Any] = {}
    for key, _label, kind in FIELDS:
        workload[key] = _number(form.get(key, ""), key, kind)
    workload["mix"] = {op: _number(form.get(f"mix_{op}", ""), f"mix {op}", int) for op in OPS}
    for op in MORE_OPS:  # left empty (or by an older page): none of it
        share = _number(form.get(f"mix_{op}", "") or "0", f"mix {op}", int)
        if share:
            workload["mix"][op] = share
    return workload


def _number(text: str, name: str, kind: type) -> int | float:
    text = text.strip()
    try:
        return kind(text)
    except ValueError:
        what = "a whole number" if kind is int else "a number"
        raise FormError(f"invalid workload: {name} must be {what}, not {text!r}") from None


def _defaults(entry: ExperimentEntry) -> dict[str, Any]:
    workload = entry.workload
    values = {key: workload.get(key, "") for key, _, _ in FIELDS}
    values.update({f"mix_{op}": (workload.get("mix") or {}).get(op, 0) for op in MIX})
    return values


def _targets(entry: ExperimentEntry) -> list[dict[str, Any]]:
    """The clusters of the experiment's kind, each with what the faults would take on it."""
    document = _document(entry)
    return [{"name": c.name, "kind": c.kind, "scopes": fault_scopes(document, c),
             "protected": c.protected}
            for c in clusters().values() if entry.system in (None, c.kind)]


def _document(entry: ExperimentEntry) -> dict[str, Any]:
    try:
        return json.loads(Path(entry.path).read_text())
    except (OSError, ValueError):
        return {}


def _fault_words(target: dict[str, Any]) -> str:
    says = [s.says for s in target["scopes"]]
    return "; ".join(says) if says else "injects no fault"


def _form(entry: ExperimentEntry, targets: list[dict[str, Any]], values: dict[str, Any],
          error: str | None, inventory_error: str | None):
    return render_template("trigger.html", entry=entry, targets=targets, values=values,
                           fields=FIELDS, mix=MIX, error=error, inventory_error=inventory_error,
                           guard_note=GUARD_NOTE, inventory=inventory())


def _entry_or_404(name: str) -> ExperimentEntry:
    try:
        return experiment(name, experiments_dir())
    except CatalogueError as exc:
        abort(404, description=str(exc))


def init_app(app: Flask) -> None:
    app.register_blueprint(bp)
