"""Experiments: the files under experiments/ and the uploaded ones (upload, delete)."""

from __future__ import annotations

from flask import url_for

from service.experiments import library
from service.web.audit import note

from .blueprint import bp
from .context import experiments_dir, sessions, user_name, user_role
from .params import fields, json_body


@bp.get("/experiments")
def list_experiments():
    return {"items": [e.as_dict() for e in library.list_all(sessions(), experiments_dir())]}


@bp.get("/experiments/<name>")
def get_experiment(name: str):
    entry, document = library.get(sessions(), experiments_dir(), name)
    return {**entry.as_dict(), "experiment": document}


@bp.post("/experiments")
def upload_experiment():
    body = fields(json_body(), required={"name": str, "experiment": dict})
    entry = library.upload(sessions(), experiments_dir(), body["name"], body["experiment"],
                             uploaded_by=user_name(), role=user_role())
    note("experiment.upload", f"experiment {entry.name}")
    url = url_for("api.get_experiment", name=entry.name)
    return {**entry.as_dict(), "url": url}, 201, {"Location": url}


@bp.delete("/experiments/<name>")
def delete_experiment(name: str):
    library.delete_upload(sessions(), experiments_dir(), name)
    note("experiment.delete", f"experiment {name}")
    return "", 204
