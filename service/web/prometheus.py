"""Prometheus' side of the service: `/metrics` (service.monitoring.metrics, read from the
database at each scrape), `/prometheus/targets`, an HTTP service discovery document of the load
drivers of the runs going on, labelled with run_id, cluster and experiment,
`/prometheus/clusters?kind=ceph|swift`, the same for the inventory's clusters
(service.monitoring.cluster_targets), and `/clusters/<name>/metrics`, a Swift cluster's recon
as metrics (service.monitoring.swift_metrics; Ceph's come from its mgr's prometheus module).

Both need a viewer, like every page: Prometheus sends an API token (`authorization:
credentials_file:` in its scrape config)."""

from __future__ import annotations

from urllib.parse import urlsplit

from flask import Blueprint, Flask, Response, abort, current_app, jsonify, request
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from sqlalchemy import select

from clusters.exceptions import InventoryError
from service.monitoring import cluster_targets, swift_metrics
from service.monitoring.metrics import experiment_name, registry
from service.store.models import Run

from .context import clusters, sessions

bp = Blueprint("prometheus", __name__)


@bp.get("/metrics")
def metrics():
    reg = current_app.extensions.get("faultline.metrics")
    if reg is None:
        reg = current_app.extensions["faultline.metrics"] = registry(sessions())
    return Response(generate_latest(reg), mimetype=CONTENT_TYPE_LATEST)


@bp.get("/prometheus/targets")
def driver_targets():
    with sessions()() as session:
        runs = session.execute(select(Run).where(Run.status == "running",
                                                 Run.metrics_url.is_not(None))).scalars()
        groups = [{"targets": [urlsplit(run.metrics_url).netloc],
                   "labels": {"run_id": str(run.id), "cluster": run.cluster,
                              "experiment": experiment_name(run)}} for run in runs]
    return jsonify(groups)


@bp.get("/prometheus/clusters")
def cluster_target_groups():
    kind = request.args.get("kind", "")
    if kind not in cluster_targets.KINDS:
        abort(400, description=f"kind must be one of {', '.join(cluster_targets.KINDS)}, "
                               f"not {kind!r}")
    try:
        found = clusters()
    except InventoryError as exc:  # Prometheus keeps the targets it had and logs this
        abort(500, description=str(exc))
    return jsonify(cluster_targets.target_groups(found.values(), kind, request.scheme,
                                                 request.host))


@bp.get("/clusters/<name>/metrics")
def cluster_metrics(name: str):
    try:
        cluster = clusters().get(name)
    except InventoryError as exc:
        abort(500, description=str(exc))
    if cluster is None:
        abort(404, description=f"no cluster {name!r} in the inventory")
    if cluster.kind != "swift":
        abort(404, description=f"{name} is a {cluster.kind} cluster: scrape its own exporter "
                               "(Ceph: the mgr's prometheus module)")
    reg = swift_metrics.registry(cluster)
    return Response(generate_latest(reg), mimetype=CONTENT_TYPE_LATEST)


def init_app(app: Flask) -> None:
    app.register_blueprint(bp)
