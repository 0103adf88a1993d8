"""Fill the cluster to a fraction of its raw capacity (`target`), or with a fixed number of
objects (`objects`), and empty it again, as Chaos Toolkit actions. The experiment then runs
its load and fault on the full cluster. A fixed count puts the same amount of data behind
every run's fault, whatever the cluster's usage said when the run began (space that the
previous run's fill freed can be counted for a while after it was deleted).

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
MOST_OBJECTS = 1_000_000


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def check_arguments(func: str, arguments: dict, cluster: Cluster) -> None:
    """Before a run: a target in (0, 0.9] or a count of objects, not both, and a sensible
    object size."""
    if func != "fill_cluster":
        return
    size, count = arguments.get("object_mib", 4), arguments.get("objects")
    if count is not None:
        if arguments.get("target") is not None:
            raise ActivityFailed("give the fill a target or a number of objects, not both")
        if not isinstance(count, int) or isinstance(count, bool) \
                or not 0 < count <= MOST_OBJECTS:
            raise ActivityFailed(f"fill objects must be a whole number in [1, {MOST_OBJECTS}], "
                                 f"not {count!r}")
    else:
        target = arguments.get("target", 0.5)
        if not _number(target) or not 0 < target <= HIGHEST_TARGET:
            raise ActivityFailed(f"fill target must be a fraction in (0, {HIGHEST_TARGET}], "
                                 f"not {target!r}")
    if not _number(size) or not 0 < size <= 64:
        raise ActivityFailed(f"object_mib must be in (0, 64], not {size!r}")


@fault_action
def fill_cluster(target: float | None = None, object_mib: float = 4,
                 objects: int | None = None, timeout_s: float = 1800,
                 configuration: dict = None) -> dict:
    """Write objects of `object_mib` into a separate fill container/pool namespace: until
    the raw usage reaches `target` (a fraction of raw capacity; 0.5 if neither is given), or
    exactly `objects` of them. Returns the usage before and after."""
    cluster = cluster_of(configuration)
    check_arguments("fill_cluster", {"target": target, "object_mib": object_mib,
                                     "objects": objects}, cluster)
    size = int(object_mib * 1024**2)
    what = f"with {objects} objects" if objects is not None \
        else f"toward {0.5 if target is None else target:.0%} raw usage"
    ledger_before(cluster, "fill", f"filled {what} ({filler.FILL_NAME})",
                  "actions.fill.remove_fill", {})
    try:
        if objects is not None:
            return filler.fill_count(cluster, objects, size, timeout_s)
        return filler.fill_to(cluster, 0.5 if target is None else float(target), size,
                              timeout_s)
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
    size = a.get("object_mib", 4)
    if a.get("objects") is not None:
        return Scope(f"writes {a['objects']} fill objects of {size} MiB in {where}")
    return Scope(f"fills the cluster to {a.get('target', 0.5):.0%} raw usage with {size} MiB "
                 f"objects in {where}")


# the note is for a run whose fault comes after the fill (the fill is its baseline's start)
FAULTS = {"fill_cluster": Fault("remove_fill", _fill_scope, notes={"ceph": (
    "On a filled cluster a surviving OSD may not take a lost OSD's copies (backfillfull ratio "
    "0.90): Ceph then cannot re-replicate until the OSD is back.")})}
