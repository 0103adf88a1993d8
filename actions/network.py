"""Partition a node from the rest of the cluster, and heal it, as Chaos Toolkit actions.

The node's link stays up and its daemons keep running, but everything in and out of it
is dropped (nftables on the node, SSH excepted: clusters/firewall.py), so peers see
a node that went silent while it still believes it is fine.
"""

from __future__ import annotations

from chaoslib.exceptions import ActivityFailed

from clusters import firewall
from clusters.exceptions import ClusterError
from clusters.inventory import Cluster

from .safety import (
    check_blast_radius,
    cluster_of,
    fail,
    ledger_before,
    ledger_restored,
    node_of,
)

__all__ = ["partition_node", "heal_partition"]


def check_arguments(func: str, arguments: dict, cluster: Cluster) -> None:
    """Before a run: the node exists and has nftables."""
    if func in ("partition_node", "heal_partition"):
        try:
            firewall.check_ready(node_of(cluster, str(arguments.get("node", "node1"))))
        except ClusterError as exc:
            raise ActivityFailed(str(exc)) from None


def partition_node(node: str = "node1", allow_unavailable: bool = False,
                   configuration: dict = None) -> dict:
    """Drop all traffic of one node (but SSH) while its link and daemons stay up. Refused if
    it would leave data unavailable or with one copy, unless allow_unavailable."""
    cluster = cluster_of(configuration)
    target = node_of(cluster, node)
    verdict = check_blast_radius(cluster, f"partition {target.name}", allow_unavailable,
                                 nodes={target.name})
    ledger_before(cluster, f"partition:{target.name}",
                  f"{target.name} partitioned (nftables table inet {firewall.TABLE})",
                  "actions.network.heal_partition", {"node": target.name})
    try:
        firewall.isolate(target)
    except ClusterError as exc:
        raise fail("partition_node", exc) from None
    return {"node": target.name, "guard": verdict}


def heal_partition(node: str = "node1", configuration: dict = None) -> dict:
    """Remove the partition of a node (idempotent)."""
    cluster = cluster_of(configuration)
    target = node_of(cluster, node)
    try:
        firewall.rejoin(target)
    except ClusterError as exc:
        raise fail("heal_partition", exc) from None
    ledger_restored(cluster, f"partition:{target.name}")
    return {"node": target.name, "healed": True}
