"""Fill the cluster to a fraction of its raw capacity, and empty it again, as Chaos Toolkit
actions. The experiment then runs its load and fault on the full cluster.

The fill objects live apart from the experiment's data (clusters/faults/filler.py): Ceph, the
RADOS namespace `faultline-fill` of the cluster's pool; Swift, the container
`faultline-fill`. Usage is the cluster's own figure (Ceph `df`, Swift recon).
"""

from __future__ import annotations

from chaoslib.exceptions import ActivityFailed

from clusters.access.inventory import Cluster
from clusters.exceptions import ClusterError
from clusters.faults import filler

from .fault_spec import Fault, Scope
from .safety import cluster_of, fail, fault_action, ledger_before, ledger_restored

__all__ = ["fill_cluster", "remove_fill"]

# Ceph's nearfull ratio is 0.85 and full 0.95; Swift refuses writes near 100%
HIGHEST_TARGET = 0.9


def check_arguments(func: str, arguments: dict, cluster: Cluster) -> None:
    """Before a run: a target in (0, 0.9] and a sensible object size."""
    if func != "fill_cluster":
        return
    target, size = arguments.get("target", 0.5), arguments.get("object_mib", 4)
    if isinstance(target, bool) or not isinstance(target, int | float) \
            or not 0 < target <= HIGHEST_TARGET:
        raise ActivityFailed(f"fill target must be a fraction in (0, {HIGHEST_TARGET}], "
                             f"not {target!r}")
    if isinstance(size, bool) or not isinstance(size, int | float) or not 0 < size <= 64:
        raise ActivityFailed(f"object_mib must be in (0, 64], not {size!r}")


@fault_action
def fill_cluster(target: float = 0.5, object_mib: float = 4, timeout_s: float = 1800,
                 configuration: dict = None) -> dict:
    """Write large objects into a separate fill container/pool namespace until the raw usage
    reaches `target` (a fraction of raw capacity). Returns the usage before and after."""
    cluster = cluster_of(configuration)
    check_arguments("fill_cluster", {"target": target, "object_mib": object_mib}, cluster)
    ledger_before(cluster, "fill", f"filled toward {target:.0%} raw usage "
                  f"({filler.FILL_NAME})", "actions.fill.remove_fill", {})
    try:
        return filler.fill_to(cluster, float(target), int(object_mib * 1024**2), timeout_s)
    except ClusterError as exc:
        raise fail("fill_cluster", exc) from None


def remove_fill(configuration: dict = None) -> dict:
    """Delete every fill object (idempotent)."""
    cluster = cluster_of(configuration)
    try:
        result = filler.remove_fill(cluster)
    except ClusterError as exc:
        raise fail("remove_fill", exc) from None
    ledger_restored(cluster, "fill")
    return result


def _fill_scope(cluster: Cluster, a: dict) -> Scope:
    check_arguments("fill_cluster", a, cluster)
    where = "the pool's namespace faultline-fill" if cluster.kind == "ceph" \
        else "the container faultline-fill"
    return Scope(f"fills the cluster to {a['target']:.0%} raw usage with {a['object_mib']} MiB "
                 f"objects in {where}")


# the note is for a run whose fault comes after the fill (the fill is its baseline's start)
FAULTS = {"fill_cluster": Fault("remove_fill", _fill_scope, notes={"ceph": (
    "On a filled cluster a surviving OSD may not take a lost OSD's copies (backfillfull ratio "
    "0.90): Ceph then cannot re-replicate until the OSD is back.")})}
