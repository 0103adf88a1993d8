"""GET /faults (the outstanding faults of the fault ledgers) and POST /heal, which queues a
`heal_cluster` job for the workers (service.jobs.heal_jobs); GET /heal/<job_id> follows it."""

from __future__ import annotations

from flask import url_for

from service.jobs import heal_jobs
from service.runs import heal
from service.web.audit import note

from .blueprint import bp
from .context import inventory, queue_app, sessions
from .params import check_query, fields, json_body, query_str


@bp.get("/faults")
def list_faults():
    check_query(("cluster",))
    return {"items": heal.outstanding_rows(sessions(), query_str("cluster"))}


@bp.post("/heal")
def heal_cluster():
    body = fields(json_body(), required={"cluster": str})
    with queue_app() as app:
        job_id = heal_jobs.defer(app, body["cluster"], inventory())
    note("cluster.heal", f"cluster {body['cluster']}", {"job_id": job_id})
    url = url_for("api.get_heal_job", job_id=job_id)
    return ({"job_id": job_id, "cluster": body["cluster"], "status": "todo", "url": url}, 202,
            {"Location": url})


@bp.get("/heal/<int:job_id>")
def get_heal_job(job_id: int):
    with queue_app() as app:
        return heal_jobs.job(app, job_id)
