"""Runs: queue one (the workers run it), list, read, and cancel.

A run on a cluster that is busy (another run queued or running on it) is queued all the
same, 202 like any other, and waits its turn: `waiting_for` lists the runs before it.
"""

from __future__ import annotations

from flask import url_for

from service.experiments import library
from service.jobs import run_queue
from service.results import queries as run_queries
from service.results import series as run_series
from service.runs.reaper import interrupt_dead_runs
from service.web.audit import note

from .blueprint import bp
from .context import experiments_dir, inventory, queue_app, sessions, user_name, user_role
from .errors import named_in_body
from .params import check_query, fields, json_body, query_choice, query_int, query_str

FILTERS = ("status", "cluster", "kind", "experiment", "schedule_id")


@bp.get("/runs")
def list_runs():
    check_query(FILTERS + ("page", "per_page"))
    where = run_queries.RunFilter(
        status=query_choice("status", run_queries.STATUSES), cluster=query_str("cluster"),
        kind=query_choice("kind", run_queries.KINDS),
        experiment=query_str("experiment"), schedule_id=query_int("schedule_id"))
    where.check()
    interrupt_dead_runs(sessions(), "the API's runs list")  # a run whose process died
    page = run_queries.list_runs(sessions(), where, page=query_int("page", 1, minimum=1),
                                 per_page=query_int("per_page", 50, minimum=1))
    return page.as_dict()


@bp.post("/runs")
def create_run():
    body = fields(json_body(), required={"experiment": str, "cluster": str},
                  optional={"workload": dict})
    with named_in_body():
        entry, document = library.get(sessions(), experiments_dir(), body["experiment"])
    with queue_app() as app:
        run_id = run_queue.enqueue(sessions(), app, document, cluster=body["cluster"],
                                   inventory=inventory(), experiment_path=entry.path,
                                   workload=body.get("workload"), requested_by=user_name(),
                                   role=user_role())
    note("run.queue", f"run {run_id}", {"experiment": body["experiment"],
                                        "cluster": body["cluster"],
                                        "workload": body.get("workload")})
    url = url_for("api.get_run", run_id=run_id)
    return ({"run_id": run_id, "status": "queued", "url": url,
             "waiting_for": run_queries.waiting_for(sessions(), run_id)},
            202, {"Location": url})


@bp.get("/runs/<int:run_id>")
def get_run(run_id: int):
    return run_queries.detail(sessions(), run_id)


@bp.get("/runs/<int:run_id>/figures")
def run_figures(run_id: int):
    return run_queries.figures(sessions(), run_id)


@bp.get("/runs/<int:run_id>/samples")
def run_samples(run_id: int):
    data = run_series.series(sessions(), run_id)
    return {"run_id": run_id, "origin": data["origin"], "samples": data["load"],
            "cluster_samples": data["cluster"]}


@bp.get("/runs/<int:run_id>/events")
def run_events(run_id: int):
    return run_queries.events(sessions(), run_id)


@bp.get("/runs/<int:run_id>/journal")
def run_journal(run_id: int):
    return run_queries.journal(sessions(), run_id)


@bp.post("/runs/<int:run_id>/cancel")
def cancel_run(run_id: int):
    with queue_app() as app:
        outcome = run_queue.cancel(sessions(), app, run_id)
    note("run.cancel", f"run {run_id}", {"outcome": outcome})
    return {"run_id": run_id, "status": outcome}, 202
