"""Which stored calibration a relative rate may reuse: the key of a calibration.

A capacity belongs to one cluster, one load API, one cost of an operation (object sizes and
mix), one release and one topology: a cluster upgraded from pacific to reef, or given a
fourth OSD, has another capacity, and a share of the old one would load it at an unknown
share of the new. The topology's fingerprint is read from the inventory (what the run will
use): nodes, zones, devices, OSDs and the services of each kind. A calibration made before
release and topology were stored (both None) is never reused: the first relative rate after
the upgrade calibrates again, once, rather than trust a capacity of unknown shape.
"""

from __future__ import annotations

from typing import Any

from clusters.access.inventory import Cluster

# what makes an operation cost what it costs: a calibration that matches these gives a
# relative rate its ops/s
COST = ("object_size", "object_size_max", "mix")


def topology_of(cluster: Cluster) -> dict[str, Any]:
    """The cluster's shape as the inventory says it, as a calibration stores it."""
    services: dict[str, int] = {}
    for service in cluster.services:
        services[service.kind] = services.get(service.kind, 0) + 1
    return {"nodes": len(cluster.nodes), "zones": len(cluster.zones),
            "devices": len(cluster.disks),
            "osds": sum(1 for d in cluster.disks if d.osd is not None),
            "services": dict(sorted(services.items()))}


def why_not_reused(made: dict[str, Any], cluster: Cluster, api: str,
                   shape: dict[str, Any]) -> str | None:
    """Why a calibration (its `cluster`, `api`, `workload`, `release`, `topology`) does not
    give `cluster` a capacity for this API and workload shape; None when it does."""
    if made["cluster"] != cluster.name or made["api"] != api:
        return f"made on {made['cluster']} ({made['api']}), not {cluster.name} ({api})"
    other = [k for k in COST if made["workload"].get(k) != shape[k]]
    if other:
        return f"another {', '.join(k.replace('_', ' ') for k in other)}"
    if made["topology"] is None:
        return "made before calibrations recorded the release and topology"
    if made["release"] != cluster.release:
        return (f"made on release {made['release'] or 'not named'}, the cluster now runs "
                f"{cluster.release or 'a release not named'}")
    now = topology_of(cluster)
    if made["topology"] != now:
        changed = [f"{k} {made['topology'].get(k)} -> {now[k]}" for k in now
                   if made["topology"].get(k) != now[k]]
        return "made on another topology (" + ", ".join(changed) + ")"
    return None
