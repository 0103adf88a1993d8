"""The clusters of the inventory: their topology, and their live health as JSON.

The pages show what the inventory says (nodes with zone, address and power controller;
disks; daemons per node; the client endpoints), never a secret: credentials are only ever
paths in the inventory, and not even those are shown. The health is asked by the page
from `/clusters/<name>/health.json` after it has loaded (service.cluster_health, with a
short deadline), so a dead cluster never holds a page up.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Flask, abort, jsonify, render_template

from clusters.access.inventory import Cluster
from clusters.exceptions import InventoryError
from clusters.faults.power import controller_of
from service.monitoring.cluster_health import cluster_health

from .context import clusters, inventory

bp = Blueprint("clusters", __name__)

# client settings worth showing: where the cluster is reached, never how to authenticate
SHOWN_CLIENT_KEYS = ("conf", "pool", "auth_url", "swift_dir", "endpoint", "prometheus")


@bp.get("/clusters")
def index():
    try:
        found = clusters()
    except InventoryError as exc:
        return render_template("clusters.html", clusters=[], error=str(exc),
                               inventory=inventory())
    return render_template("clusters.html", clusters=[summary(c) for c in found.values()],
                           error=None, inventory=inventory())


@bp.get("/clusters/<name>")
def show(name: str):
    return render_template("cluster.html", cluster=topology(_cluster_or_404(name)),
                           inventory=inventory())


@bp.get("/clusters/<name>/health.json")
def health(name: str):
    return jsonify(cluster_health(_cluster_or_404(name)))


def _cluster_or_404(name: str) -> Cluster:
    try:
        found = clusters()
    except InventoryError as exc:
        abort(503, description=str(exc))
    if name not in found:
        abort(404, description=f"unknown cluster {name!r} in {inventory()} "
                               f"(known: {', '.join(sorted(found)) or 'none'})")
    return found[name]


def summary(cluster: Cluster) -> dict[str, Any]:
    return {"name": cluster.name, "kind": cluster.kind, "lab": cluster.lab, "chaos": cluster.chaos,
            "nodes": len(cluster.nodes), "zones": cluster.zones, "disks": len(cluster.disks),
            "services": len(cluster.services)}


def topology(cluster: Cluster) -> dict[str, Any]:
    """What the page shows of a cluster: no credential, no key or password file."""
    def power(node) -> str:
        kind = controller_of(node)
        if kind == "ipmi":
            return f"ipmi (BMC {(node.power or {}).get('address')})"
        return {"netns": "netns (lab: link down)", "ssh": "ssh (nftables)"}.get(kind, kind)

    nodes = [{"name": n.name, "zone": n.zone, "address": n.address, "power": power(n),
              "ssh_port": n.ssh.port,
              "daemons": [s.name for s in cluster.services_on(n.name)],
              "disks": [_disk(d) for d in cluster.disks_on(n.name)]} for n in cluster.nodes]
    local = [s.name for s in cluster.services if s.node is None]
    client = {k: v for k, v in cluster.client.items() if k in SHOWN_CLIENT_KEYS and v}
    for nested in ("swift_api", "s3"):  # RGW's endpoints, without their keys
        value = cluster.client.get(nested)
        if isinstance(value, dict):
            client.update({f"{nested}.{k}": v for k, v in value.items()
                           if k in SHOWN_CLIENT_KEYS and v})
    return {**summary(cluster), "node_list": nodes, "local_daemons": local, "client": client,
            "managed_by": sorted({"systemd unit" if s.unit else "pid file"
                                  for s in cluster.services})}


def _disk(disk) -> dict[str, Any]:
    holds = (f"osd.{disk.osd}" if disk.osd is not None
             else f"Swift device {disk.swift_device}" if disk.swift_device else "")
    return {"device": disk.device, "mount": disk.mount, "holds": holds}


def init_app(app: Flask) -> None:
    app.register_blueprint(bp)
