"""Power a node or a whole zone off, and on again, as Chaos Toolkit actions.

Off: every daemon of the node killed at once and the node cut off, so peers see
timeouts, not refusals (clusters/faults/power.py says how, per node: the lab's link,
a BMC through ipmitool, or nftables over SSH). A zone is every node the inventory
puts in it (Ceph: the CRUSH zone; Swift: the ring zone), all at once.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from chaoslib.exceptions import ActivityFailed

from clusters.access.inventory import Cluster
from clusters.exceptions import ClusterError
from clusters.faults import power

from .fault_spec import Fault, Scope
from .safety import (
    check_blast_radius,
    cluster_of,
    fail,
    fault_action,
    ledger_before,
    ledger_restored,
    node_of,
)

__all__ = ["power_off_node", "power_on_node", "power_off_zone", "power_on_zone"]


def _zone_nodes(cluster: Cluster, zone: str) -> list[str]:
    try:
        return [n.name for n in cluster.nodes_in_zone(zone)]
    except ClusterError as exc:
        raise ActivityFailed(str(exc)) from None


def _keep_monitor_quorum(cluster: Cluster, nodes: list[str], what: str,
                         allow_unavailable: bool) -> None:
    """Ceph serves nothing without a quorum of its monitors: powering off the nodes of half
    of them or more is refused, as killing a monitor is (the data guard counts copies, not
    monitors; the Reef lab's only monitor is on node1, in zone1)."""
    if cluster.kind != "ceph" or allow_unavailable:
        return
    mons = cluster.services_of_kind("mon")
    taken = [m.name for m in mons if m.node in nodes]
    left = len(mons) - len(taken)
    if taken and left <= len(mons) // 2:
        raise ActivityFailed(
            f"refused: {what} takes {', '.join(taken)} with it, leaving {left} of {len(mons)} "
            f"monitors, no quorum (a majority, {len(mons) // 2 + 1}, is needed): the whole "
            "cluster would stop serving (set allow_unavailable: true to inject anyway)")


def check_arguments(func: str, arguments: dict, cluster: Cluster) -> None:
    """Before a run: the node or zone exists, its power controller can work (a BMC
    answers), and powering it off leaves Ceph a monitor quorum."""
    if func in ("power_off_node", "power_on_node"):
        nodes = [node_of(cluster, str(arguments.get("node", "node1"))).name]
        what = f"power off {nodes[0]}"
    elif func in ("power_off_zone", "power_on_zone"):
        zone = str(arguments.get("zone", "zone1"))
        nodes = _zone_nodes(cluster, zone)
        what = f"power off zone {zone} ({', '.join(nodes)})"
    else:
        return
    if func.startswith("power_off"):
        _keep_monitor_quorum(cluster, nodes, what, bool(arguments.get("allow_unavailable")))
    try:
        for node in nodes:
            power.check_ready(cluster, node)
    except ClusterError as exc:
        raise ActivityFailed(str(exc)) from None


def _all(nodes: list[str], one) -> list[dict]:
    with ThreadPoolExecutor(max_workers=max(1, len(nodes))) as pool:
        return list(pool.map(one, nodes))


@fault_action
def power_off_node(node: str = "node1", allow_unavailable: bool = False,
                   configuration: dict = None) -> dict:
    """Power one node off: all its daemons die at once and its network goes silent.
    Refused if it would leave data unavailable or with one copy, unless allow_unavailable."""
    cluster = cluster_of(configuration)
    name = node_of(cluster, node).name
    _keep_monitor_quorum(cluster, [name], f"power off {name}", allow_unavailable)
    verdict = check_blast_radius(cluster, f"power off {name}", allow_unavailable, nodes={name})
    ledger_before(cluster, f"power:{name}",
                  f"{name} powered off ({power.describe(cluster.node(name))})",
                  "actions.power.power_on_node", {"node": name})
    try:
        result = power.power_off(cluster, name)
    except ClusterError as exc:
        raise fail("power_off_node", exc) from None
    return {**result, "guard": verdict}


def power_on_node(node: str = "node1", timeout_s: float = 600,
                  configuration: dict = None) -> dict:
    """Power a node on again and start its daemons (a running node is left alone)."""
    cluster = cluster_of(configuration)
    name = node_of(cluster, node).name
    try:
        result = power.power_on(cluster, name, timeout_s)
    except ClusterError as exc:
        raise fail("power_on_node", exc) from None
    ledger_restored(cluster, f"power:{name}")
    return result


@fault_action
def power_off_zone(zone: str = "zone1", allow_unavailable: bool = False,
                   configuration: dict = None) -> dict:
    """Power off every node of a zone at once. Refused if it would leave data unavailable or
    with one copy, unless allow_unavailable."""
    cluster = cluster_of(configuration)
    nodes = _zone_nodes(cluster, zone)
    what = f"power off zone {zone} ({', '.join(nodes)})"
    _keep_monitor_quorum(cluster, nodes, what, allow_unavailable)
    verdict = check_blast_radius(cluster, what, allow_unavailable, nodes=set(nodes))
    ledger_before(cluster, f"zone:{zone}", f"zone {zone} powered off ({', '.join(nodes)})",
                  "actions.power.power_on_zone", {"zone": zone})
    try:
        results = _all(nodes, lambda n: power.power_off(cluster, n))
    except ClusterError as exc:
        raise fail("power_off_zone", exc) from None
    return {"zone": zone, "nodes": results, "guard": verdict}


def power_on_zone(zone: str = "zone1", timeout_s: float = 600,
                  configuration: dict = None) -> dict:
    """Power every node of a zone on again and start their daemons."""
    cluster = cluster_of(configuration)
    nodes = _zone_nodes(cluster, zone)
    try:
        results = _all(nodes, lambda n: power.power_on(cluster, n, timeout_s))
    except ClusterError as exc:
        raise fail("power_on_zone", exc) from None
    ledger_restored(cluster, f"zone:{zone}")
    for node in nodes:
        ledger_restored(cluster, f"power:{node}")
    return {"zone": zone, "nodes": results}


def _how(node) -> str:
    return {"netns": "lab link down", "ipmi": "BMC", "ssh": "nftables over SSH"}.get(
        power.controller_of(node), power.controller_of(node))


def _node_scope(cluster: Cluster, a: dict) -> Scope:
    node = cluster.node(str(a["node"]))
    return Scope(f"powers off node {node.name} ({_how(node)}): every daemon of it dies",
                 nodes=(node.name,))


def _zone_scope(cluster: Cluster, a: dict) -> Scope:
    zone = str(a["zone"])
    nodes = cluster.nodes_in_zone(zone)
    return Scope(f"powers off zone {zone}: {', '.join(n.name for n in nodes)} "
                 f"({', '.join(sorted({_how(n) for n in nodes}))})",
                 nodes=tuple(n.name for n in nodes))


SWIFT_NOTE = (
    "A powered-off node or zone is transient to Swift: the proxy times out on it, writes go "
    "to handoffs, and nothing is rebuilt until it returns.")
FAULTS = {
    "power_off_node": Fault("power_on_node", _node_scope, notes={"swift": SWIFT_NOTE}),
    "power_off_zone": Fault("power_on_zone", _zone_scope, notes={
        "swift": SWIFT_NOTE,
        "ceph": ("With one copy per zone and three zones, Ceph cannot re-replicate a lost "
                 "zone's copies anywhere: it stays degraded (but active, min_size 2) until "
                 "the zone returns.")}),
}
