"""GET /clusters, /clusters/<name>: the inventory's clusters, without their secrets."""

from __future__ import annotations

from clusters.exceptions import UnknownCluster
from service.web import cluster_info

from .blueprint import bp
from .context import inventory
from .errors import ApiNotFound


@bp.get("/clusters")
def list_clusters():
    return {"items": cluster_info.list_clusters(inventory())}


@bp.get("/clusters/<name>")
def get_cluster(name: str):
    try:
        return cluster_info.get_cluster(name, inventory())
    except UnknownCluster as exc:
        raise ApiNotFound(str(exc)) from None
