"""Schedules: list, create, read (with its recent runs and their verdicts), change, delete.

A body names an experiment file by name (`ceph-kill-osd`; schedules run files, not
uploads) or a suite by name or path under experiments/suites/; both are stored as paths.
Giving one of them in a change replaces the other.
"""

from __future__ import annotations

from typing import Any

from flask import url_for

from service.experiments import library
from service.results import queries as run_queries
from service.schedules import services as schedules
from service.web.audit import note

from .blueprint import bp
from .context import experiments_dir, inventory, sessions, user_name
from .errors import BadRequest, named_in_body
from .params import fields, json_body, string_list

FIELDS: dict[str, type] = {"name": str, "cron": str, "timezone": str, "experiment": str,
                           "suite": str, "clusters": list, "workload": dict}
RECENT_RUNS = 20
# a schedule always has these: null cannot mean "none" for them, as it does for a workload
KEPT_UNLESS_GIVEN = ("name", "cron", "timezone", "enabled")


@bp.get("/schedules")
def list_schedules():
    with sessions()() as session:
        return {"items": [schedules.describe(s) for s in schedules.all_schedules(session)]}


@bp.post("/schedules")
def create_schedule():
    body = fields(json_body(), required={"name": str, "cron": str},
                  optional={k: v for k, v in FIELDS.items() if k not in ("name", "cron")})
    paths = _paths(body)
    schedule_id = schedules.create(
        sessions(), name=body["name"], cron=body["cron"],
        timezone=body.get("timezone") or "UTC", experiment=paths.get("experiment_path"),
        suite=paths.get("suite_path"), clusters=_clusters(body),
        workload=body.get("workload") or {}, created_by=user_name(), inventory=inventory())
    note("schedule.create", f"schedule {schedule_id}", {"name": body["name"]})
    url = url_for("api.get_schedule", schedule_id=schedule_id)
    return _shown(schedule_id), 201, {"Location": url}


@bp.get("/schedules/<int:schedule_id>")
def get_schedule(schedule_id: int):
    recent = run_queries.list_runs(sessions(), run_queries.RunFilter(schedule_id=schedule_id),
                                   per_page=RECENT_RUNS)
    return {**_shown(schedule_id), "runs": recent.items}


@bp.patch("/schedules/<int:schedule_id>")
def change_schedule(schedule_id: int):
    body = fields(json_body(), optional={**FIELDS, "enabled": bool})
    for name in KEPT_UNLESS_GIVEN:
        if name in body and body[name] is None:
            raise BadRequest(f"field '{name}' cannot be null; leave it out to keep it")
    changes: dict[str, Any] = {k: body[k] for k in KEPT_UNLESS_GIVEN if k in body}
    if "workload" in body:
        changes["workload"] = body["workload"] or {}
    if "clusters" in body:
        changes["clusters"] = _clusters(body)
    changes.update(_paths(body))
    if "experiment" in body and "suite" not in body:
        changes["suite_path"] = None
    if "suite" in body and "experiment" not in body:
        changes["experiment_path"] = None
        changes.setdefault("clusters", [])
    schedules.change(sessions(), schedule_id, inventory(), **changes)
    note("schedule.change", f"schedule {schedule_id}", {"fields": sorted(body)})
    return _shown(schedule_id)


@bp.delete("/schedules/<int:schedule_id>")
def delete_schedule(schedule_id: int):
    schedules.delete(sessions(), schedule_id)
    note("schedule.delete", f"schedule {schedule_id}")
    return "", 204


def _paths(body: dict[str, Any]) -> dict[str, str | None]:
    """experiment_path / suite_path from the names given (None where given as null)."""
    paths: dict[str, str | None] = {}
    if "experiment" in body:
        with named_in_body():
            paths["experiment_path"] = (library.file_path(experiments_dir(),
                                                            body["experiment"])
                                        if body["experiment"] is not None else None)
    if "suite" in body:
        paths["suite_path"] = (library.suite_path(experiments_dir(), body["suite"])
                               if body["suite"] is not None else None)
    return paths


def _clusters(body: dict[str, Any]) -> list[str]:
    return string_list("clusters", body["clusters"]) if body.get("clusters") else []


def _shown(schedule_id: int) -> dict[str, Any]:
    with sessions()() as session:
        return schedules.describe(schedules.get(session, schedule_id))
