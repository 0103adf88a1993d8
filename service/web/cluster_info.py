"""What the API shows of the inventory's clusters: never a secret, nor where one is kept.

Built field by field from the inventory (nodes, disks, services), so a new field there is
not shown until it is added here; the client section, whose keys vary by system, is
copied without any key whose name speaks of a secret (key, secret, password, token,
credential: `key_file`, `key_env`, `keyring`, `secret_key_file`, ...). SSH access (user,
key file, known hosts) and the services' start commands are left out whole. Nothing here
contacts a cluster.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from clusters.access.inventory import Cluster, load_cluster, load_inventory
from clusters.faults.power import controller_of
from clusters.paths import default_inventory

SECRET_WORDS = ("key", "secret", "password", "passwd", "passphrase", "token", "credential")


def list_clusters(inventory: str | Path | None = None) -> list[dict[str, Any]]:
    clusters = load_inventory(inventory or default_inventory())
    return [describe(clusters[name]) for name in sorted(clusters)]


def get_cluster(name: str, inventory: str | Path | None = None) -> dict[str, Any]:
    """One cluster; UnknownCluster if the inventory has none of that name."""
    return describe(load_cluster(inventory or default_inventory(), name))


def describe(cluster: Cluster) -> dict[str, Any]:
    return {
        "name": cluster.name, "kind": cluster.kind, "lab": cluster.lab, "zones": cluster.zones,
        "chaos": cluster.chaos,  # "protected": it takes no fault
        "nodes": [{"name": n.name, "address": n.address, "zone": n.zone,
                   "power": controller_of(n)} for n in cluster.nodes],
        "disks": [{"node": d.node, "device": d.device, "mount": d.mount, "osd": d.osd,
                   "swift_device": d.swift_device} for d in cluster.disks],
        "services": [{"name": s.name, "kind": s.kind, "node": s.node, "unit": s.unit,
                      "pid_file": s.pid_file} for s in cluster.services],
        "client": without_secrets(cluster.client),
    }


def is_secret(key: str) -> bool:
    return any(word in key.lower() for word in SECRET_WORDS)


def without_secrets(value: Any) -> Any:
    """A copy of a mapping (and the mappings and lists in it) without the secret keys."""
    if isinstance(value, dict):
        return {str(k): without_secrets(v) for k, v in value.items() if not is_secret(str(k))}
    if isinstance(value, list):
        return [without_secrets(v) for v in value]
    return value
