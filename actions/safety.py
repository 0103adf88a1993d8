"""What every fault action does around the injection: judge the blast radius, write the
fault into the ledger, and strike it off once restored.

A cluster the inventory does not mark `chaos: allowed` takes no fault (clusters.safety.protection):
every fault action is marked `fault_action`, which refuses it before the action's body runs,
and the guard and the ledger entry, which every fault passes before it injects anything,
refuse it again. Restores and probes pass none of these and still work on it.

Order matters: the guard runs first (nothing is written for a refused fault), then
the ledger entry is committed, and only then is the fault injected, so a process
killed at any point leaves either nothing broken or a ledger entry that
`faultline heal` can undo. A failed injection keeps its entry: it may have broken
something half-way, and every restore is idempotent.

A restore's arguments say only which fault to undo; what to undo is the entry's record,
written by the injection (`ledger_before(..., record=...)`), read back with `recorded`, and
checked against the inventory by the restore before anything runs: a record that points
anywhere else is refused (`refused_record`).
"""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Callable, Iterable

from chaoslib.exceptions import ActivityFailed

from clusters.access.config import cluster_from_configuration
from clusters.access.inventory import Cluster, Node, Service
from clusters.exceptions import ClusterError
from clusters.faults import supervision
from clusters.safety import fault_ledger, guard
from clusters.safety.protection import check_fault_allowed

logger = logging.getLogger("chaostoolkit")

ALL_RINGS = ("object", "container", "account")


def cluster_of(configuration: dict | None) -> Cluster:
    try:
        return cluster_from_configuration(configuration)
    except ClusterError as exc:
        raise ActivityFailed(str(exc)) from None


def node_of(cluster: Cluster, name: str) -> Node:
    """The cluster's node of that name; an unknown name fails the activity naming the known."""
    try:
        return cluster.node(name)
    except ClusterError as exc:
        raise ActivityFailed(str(exc)) from None


def taken_down(cluster: Cluster, nodes: Iterable[str] = (), osds: Iterable[int] = (),
               swift_keys: Iterable[str] = ()) -> tuple[set[int], set[str]]:
    """What a fault takes down, in the guard's terms: OSD ids (Ceph), ring keys (Swift)."""
    nodes = set(nodes)
    if cluster.kind == "ceph":
        return set(osds) | guard.ceph_osds_on_nodes(cluster, nodes), set()
    return set(), set(swift_keys) | guard.swift_keys_on_nodes(cluster, nodes, ALL_RINGS)


def already_faulted(cluster: Cluster) -> tuple[set[int], set[str]]:
    """What the outstanding faults of the ledger take down, whether or not the cluster has
    noticed yet (Ceph marks a silent node down only after the heartbeat grace)."""
    nodes: set[str] = set()
    osds: set[int] = set()
    keys: set[str] = set()
    for entry in fault_ledger.outstanding(cluster.name):
        kind, _, target = entry.key.partition(":")
        # a lossy node may be marked down; the OOM killer may take any daemon of a node
        if kind in ("power", "partition", "link", "memory"):
            nodes.add(target)
        elif kind == "zone":
            nodes |= {n.name for n in cluster.nodes if n.zone == target}
        elif kind == "disk":
            node, _, mount = target.partition(":")
            for disk in cluster.disks_on(node):
                if disk.mount == mount and disk.osd is not None:
                    osds.add(disk.osd)
                elif disk.mount == mount:
                    keys |= {f"{r}:{node}/{disk.swift_device}" for r in ALL_RINGS}
        elif kind in ("daemon", "throttle") and target.startswith("osd."):
            osds.add(int(target.split(".")[1]))
        elif kind in ("daemon", "throttle") and "-server." in target:
            ring, _, node = target.partition("-server.")
            keys |= {f"{ring}:{node}/{d.swift_device}" for d in cluster.disks_on(node)}
    known = {n.name for n in cluster.nodes}
    more_osds, more_keys = taken_down(cluster, nodes & known)
    return osds | more_osds, keys | more_keys


def check_blast_radius(cluster: Cluster, what: str, allow_unavailable: bool,
                       nodes: Iterable[str] = (), osds: Iterable[int] = (),
                       swift_keys: Iterable[str] = ()) -> dict:
    """Refuse (ActivityFailed with the reasoning) a fault that would leave data unavailable
    or unsafe, unless allow_unavailable; return the verdict. Faults already injected count
    as down (faults stack). Not the protection gate: restores ask the guard too, and a
    protected cluster's faults are refused by fault_action and ledger_before."""
    try:
        taking_osds, taking_keys = taken_down(cluster, nodes, osds, swift_keys)
        down_osds, down_keys = already_faulted(cluster)
        if cluster.kind == "ceph":
            verdict = guard.check_ceph(cluster, taking_osds, what, allow_unavailable,
                                       also_down=down_osds)
        else:
            verdict = guard.check_swift(cluster, taking_keys, what, allow_unavailable,
                                        also_down=down_keys)
    except ClusterError as exc:
        raise ActivityFailed(str(exc)) from None
    if not verdict.allowed:
        logger.warning(f"injecting anyway (allow_unavailable): {verdict.message()}")
    return verdict.as_dict()


def ledger_before(cluster: Cluster, key: str, description: str, restore: str,
                  arguments: dict, record: dict | None = None) -> str:
    """Write the fault down before it is injected: the restore's `arguments` (which fault)
    and the `record` of what the injection does; returns the entry id. Every fault passes
    here before it injects: a protected cluster is refused here whatever came before."""
    refuse_if_protected(cluster, description)
    return fault_ledger.record(cluster.name, key, description, restore, arguments,
                               record).id


def recorded(cluster: Cluster, key: str) -> dict | None:
    """What the newest outstanding fault of `key` did, as its injection wrote it; None when
    the ledger has no such fault."""
    return fault_ledger.recorded(cluster.name, key)


def refused_record(what: str, key: str, why: str) -> ActivityFailed:
    """The one error of a restore whose ledger record points outside what the fault used."""
    return ActivityFailed(f"{what}: refused: the fault ledger's record of {key} {why}; "
                          "nothing was run (check the entry with `faultline faults`)")


def refuse_if_protected(cluster: Cluster, what: str) -> None:
    """ActivityFailed, before anything is touched, if the cluster takes no fault."""
    try:
        check_fault_allowed(cluster, what)
    except ClusterError as exc:
        raise ActivityFailed(str(exc)) from None


def fault_action(action: Callable) -> Callable:
    """Mark a fault action: before its body runs (even a read of the cluster), a protected
    cluster is refused. Every fault of actions/ is marked (tests/unit/test_protected_clusters
    checks); restores, probes and watches are not, so they work on any cluster."""
    signature = inspect.signature(action)

    @functools.wraps(action)
    def refusing(*args, **kwargs):
        configuration = signature.bind_partial(*args, **kwargs).arguments.get("configuration")
        refuse_if_protected(cluster_of(configuration), action.__name__)
        return action(*args, **kwargs)

    refusing.faultline_fault = True  # type: ignore[attr-defined]
    return refusing


def ledger_restored(cluster: Cluster, key: str) -> None:
    fault_ledger.strike(cluster.name, key)


def check_intent(intent: object) -> None:
    """A process fault's intent is "crash" or "down" (clusters/faults/supervision.py)."""
    try:
        supervision.check_intent(intent)  # type: ignore[arg-type]
    except ValueError as exc:
        raise ActivityFailed(str(exc)) from None


def inject_process_fault(cluster: Cluster, service: Service, intent: str, restore: str,
                         arguments: dict) -> dict:
    """Plan a process fault (kill with an intent), write it down with its restore and what
    it does, then inject it; returns what was done."""
    details = supervision.prepare(cluster, service, intent)
    ledger_before(cluster, f"daemon:{service.name}", supervision.describe(details, service.node),
                  restore, arguments, {"fault": details})
    return supervision.inject(cluster, service, details)


def process_record(cluster: Cluster, service: Service, what: str) -> dict | None:
    """The ledger's record of the process fault on a daemon (None: there is none), once it
    is seen to name that daemon and the inventory's unit; a record that names another is
    refused (ActivityFailed), before anything runs."""
    key = f"daemon:{service.name}"
    try:
        return supervision.checked_record(cluster, service,
                                          (recorded(cluster, key) or {}).get("fault"))
    except ValueError as exc:
        raise refused_record(what, key, str(exc)) from None


def undo_process_fault(cluster: Cluster, service: Service, details: dict | None,
                       strike: bool = True) -> dict:
    """Undo the process fault on a daemon as `process_record` read it and strike it off
    unless told not to; the daemon's outcome (clusters.faults.supervision.restore)."""
    outcome = supervision.restore(cluster, service, details)
    if strike:
        ledger_restored(cluster, f"daemon:{service.name}")
    return outcome


def restore_report(outcomes: list[dict]) -> dict:
    """What a restore of process faults reports: the daemons it started, each daemon's
    outcome (when a crashed one came back, and how often), and the deviations from the
    faults' intent (a daemon meant to stay down that came back)."""
    return {"started": [o["daemon"] for o in outcomes if o["started_by_restore"]],
            "daemons": outcomes,
            "deviations": [o["deviation"] for o in outcomes if o["deviation"]]}


def fail(what: str, exc: Exception) -> ActivityFailed:
    return ActivityFailed(f"{what}: {exc}")
