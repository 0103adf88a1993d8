"""Partition a node from the rest of the cluster, or make a link lossy or narrow, and undo
either, as Chaos Toolkit actions.

A partition: the node's link stays up and its daemons keep running, but everything in and
out of it is dropped (nftables on the node, SSH excepted: clusters/faults/firewall.py), so peers
see a node that went silent while it still believes it is fine.

A lossy link (clusters/faults/link_faults.py): a share of the packets of one node, or of the
traffic between two zones, is lost, and/or the traffic is capped; the nodes keep talking,
slowly and with retransmissions.
"""

from __future__ import annotations

from chaoslib.exceptions import ActivityFailed

from clusters.access.inventory import Cluster
from clusters.exceptions import ClusterError
from clusters.faults import firewall, link_faults
from clusters.safety import fault_ledger

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

__all__ = ["partition_node", "heal_partition", "degrade_link", "restore_link"]


def check_arguments(func: str, arguments: dict, cluster: Cluster) -> None:
    """Before a run: the node exists and has nftables."""
    if func in ("partition_node", "heal_partition"):
        try:
            firewall.check_ready(node_of(cluster, str(arguments.get("node", "node1"))))
        except ClusterError as exc:
            raise ActivityFailed(str(exc)) from None
    if func == "degrade_link":
        try:
            fault = _link_fault(cluster, arguments)
            for name in link_faults.receivers(cluster, fault):
                firewall.check_ready(cluster.node(name))
            mechanism = arguments.get("mechanism", "auto")
            if fault.delay_ms or mechanism != "auto":  # netem asked for: is it there?
                link_faults.mechanism_for(cluster, fault, mechanism)
        except ClusterError as exc:
            raise ActivityFailed(str(exc)) from None


def _link_fault(cluster: Cluster, arguments: dict) -> link_faults.LinkFault:
    return link_faults.link_fault(
        cluster, node=arguments.get("node") or "", zones=arguments.get("zones"),
        loss_percent=arguments.get("loss_percent"), cap_mbit=arguments.get("cap_mbit"),
        delay_ms=arguments.get("delay_ms", 0))


@fault_action
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


@fault_action
def degrade_link(node: str = "", zones: list = None, loss_percent: int = None,
                 cap_mbit: float = None, delay_ms: int = 0, mechanism: str = "auto",
                 allow_unavailable: bool = False, configuration: dict = None) -> dict:
    """Make one node's link, or the link between two zones (zones=["zone1", "zone2"]), lossy
    (loss_percent, 1 to 30) and/or narrow (cap_mbit, megabits per second). Mechanism "auto":
    netem on the node when its kernel has it, else nftables (random drop and a rate limit
    in prerouting, SSH excepted); added latency (delay_ms) needs netem. One lossy link per
    cluster at a time. A lossy node may be marked down by its peers, so it is guarded as a
    partition is; between zones nothing is taken down. Returns the mechanism used, in
    words, and the nodes touched."""
    cluster = cluster_of(configuration)
    try:
        fault = _link_fault(cluster, {"node": node, "zones": zones, "loss_percent": loss_percent,
                                      "cap_mbit": cap_mbit, "delay_ms": delay_ms})
        already = [e.key for e in fault_ledger.outstanding(cluster.name)
                   if e.key.startswith("link:")]
        if already:
            raise ClusterError(f"{cluster.name} already has a lossy link ({already[0]}): "
                               "restore_link first")
        used = link_faults.mechanism_for(cluster, fault, mechanism)
        verdict = check_blast_radius(cluster, f"lossy link {fault.scope}", allow_unavailable,
                                     nodes={fault.node} if fault.node else set())
    except ClusterError as exc:
        raise fail("degrade_link", exc) from None
    described = link_faults.describe_mechanism(fault, used)
    ledger_before(cluster, fault.key, f"{fault.says()} ({described})",
                  "actions.network.restore_link", {})
    try:
        touched = link_faults.apply(cluster, fault, used)
    except ClusterError as exc:
        raise fail("degrade_link", exc) from None
    return {"link": fault.says(), "mechanism": used, "mechanism_detail": described,
            "loss_percent": fault.loss_percent, "cap_mbit": fault.cap_mbit,
            "delay_ms": fault.delay_ms, "nodes": touched, "guard": verdict}


def restore_link(configuration: dict = None) -> dict:
    """Remove the lossy link from every node of the cluster (idempotent): the nftables table
    inet faultline_link and our root qdisc (netem, or the tbf of a node's cap). Returns what
    the nftables rules counted before they went (packets seen, lost, capped, and the loss
    measured) and where they were."""
    cluster = cluster_of(configuration)
    try:
        found = link_faults.clear(cluster)
    except ClusterError as exc:
        raise fail("restore_link", exc) from None
    for entry in fault_ledger.outstanding(cluster.name):
        if entry.key.startswith("link:"):
            ledger_restored(cluster, entry.key)
    counted = [f["counted"] for f in found.values()]
    seen, lost = sum(c["seen"] for c in counted), sum(c["lost"] for c in counted)
    return {"restored": True, "nodes": [n for n, f in found.items() if f["had"]],
            "packets_seen": seen, "packets_lost": lost,
            "packets_capped": sum(c["capped"] for c in counted),
            "measured_loss": round(lost / seen, 4) if seen else None}


def _partition_scope(cluster: Cluster, a: dict) -> Scope:
    node = cluster.node(str(a["node"]))
    return Scope(f"cuts node {node.name} off the network (all its traffic but SSH dropped; its "
                 "daemons keep running)", nodes=(node.name,))


def _link_scope(cluster: Cluster, a: dict) -> Scope:
    fault = _link_fault(cluster, a)
    return Scope(f"makes the link lossy: {fault.says()} (nftables in prerouting, or netem where "
                 "the node has it; daemons keep running)",
                 nodes=(fault.node,) if fault.node else ())


LOSSY_LINK_NOTE = (
    "A lossy link drops packets at random (and polices a cap) while every daemon runs and "
    "answers: TCP resends what is lost, so clients see latency before errors, and the "
    "cluster notices only if heartbeats miss their grace. Added latency needs the netem "
    "qdisc; the fault line says which mechanism this run used.")
FAULTS = {
    "partition_node": Fault("heal_partition", _partition_scope, notes={
        "swift": ("A partitioned node still runs and believes it is fine; the proxy times out "
                  "on it and error-limits it, writes go to handoffs until the partition "
                  "heals."),
        "ceph": ("A partitioned OSD keeps running; its peers report it down after the "
                 "heartbeat grace, and after the partition heals it rejoins by itself "
                 "(slow-ping warnings can hold HEALTH_WARN for a minute).")}),
    "degrade_link": Fault("restore_link", _link_scope,
                          notes={"ceph": LOSSY_LINK_NOTE, "swift": LOSSY_LINK_NOTE}),
}
