"""GET /clusters, /clusters/<name>: the inventory's clusters, without their secrets."""

from __future__ import annotations

from clusters.exceptions import UnknownCluster

from .. import cluster_info
from .blueprint import bp
from .context import inventory
from .errors import NotFound


@bp.get("/clusters")
def list_clusters():
    return {"items": cluster_info.list_clusters(inventory())}


@bp.get("/clusters/<name>")
def get_cluster(name: str):
    try:
        return cluster_info.get_cluster(name, inventory())
    except UnknownCluster as exc:
        raise NotFound(str(exc)) from None
