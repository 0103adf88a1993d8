"""Protected clusters: a cluster whose inventory does not say `chaos: allowed` takes no fault.

The one check every level makes (the preflight of a run, the queue, and each fault action
right before its ledger entry and injection): reading it is all it does, so a refusal
touches nothing. Probes, restores and heals never ask it: undoing a fault on a protected
cluster must stay possible.
"""

from __future__ import annotations

from clusters.access.inventory import Cluster
from clusters.exceptions import ProtectedCluster

HOW_TO_ALLOW = "set chaos: allowed on it in the inventory to let it take faults"


def check_fault_allowed(cluster: Cluster, what: str) -> None:
    """ProtectedCluster naming `what` (e.g. "kill_osd") if the cluster takes no fault."""
    if cluster.protected:
        raise ProtectedCluster(f"cluster {cluster.name!r} is protected (its inventory does "
                               f"not say chaos: allowed): {what} refused, nothing was "
                               f"touched ({HOW_TO_ALLOW})")
