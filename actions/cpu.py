"""A node starved of CPU, as Chaos Toolkit actions: a bounded stress-ng hog on the node
(clusters/faults/cpu_hog.py), and its end."""

from __future__ import annotations

from chaoslib.exceptions import ActivityFailed

from clusters.access.inventory import Cluster
from clusters.access.ssh import run_on_node
from clusters.exceptions import ClusterError
from clusters.faults import cpu_hog

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

__all__ = ["hog_cpu", "stop_cpu_hog"]


def check_arguments(func: str, arguments: dict, cluster: Cluster) -> None:
    """Before a run: the node exists, the hog is bounded."""
    if func not in ("hog_cpu", "stop_cpu_hog"):
        return
    try:
        cluster.node(str(arguments.get("node", "node1")))
        if func == "hog_cpu":
            cpu_hog.cpu_hog(str(arguments.get("node", "node1")),
                            **{k: arguments[k] for k in ("workers", "load_percent",
                                                          "ceiling_cores", "timeout_s")
                               if k in arguments})
    except ClusterError as exc:
        raise ActivityFailed(str(exc)) from None


@fault_action
def hog_cpu(node: str = "node1", workers: int = 1, load_percent: int = 100,
            ceiling_cores: float = 1.0, timeout_s: int = 60, allow_unavailable: bool = False,
            configuration: dict = None) -> dict:
    """Keep the node's CPUs busy with stress-ng (`workers` CPU workers at `load_percent`)
    inside a cgroup whose quota is `ceiling_cores`, for at most `timeout_s` seconds (it
    ends by itself then; stop_cpu_hog ends it sooner). Its daemons stay up, slowed. The
    guard's verdict is given (it takes nothing down). Returns the hog and the node's CPUs."""
    cluster = cluster_of(configuration)
    target = node_of(cluster, node)
    try:
        hog = cpu_hog.cpu_hog(target.name, workers, load_percent, ceiling_cores, timeout_s)
        verdict = check_blast_radius(cluster, f"CPU hog on {target.name}", allow_unavailable)
    except ClusterError as exc:
        raise fail("hog_cpu", exc) from None
    ledger_before(cluster, f"cpuhog:{target.name}", hog.says(), "actions.cpu.stop_cpu_hog",
                  {"node": target.name})
    try:
        cpus = run_on_node(target, cpu_hog.start_command(hog), timeout=30).stdout.strip()
    except ClusterError as exc:
        raise fail("hog_cpu", exc) from None
    return {"node": target.name, "hog": hog.says(), "cgroup": hog.cgroup,
            "node_cpus": int(cpus) if cpus.isdigit() else None,
            "ceiling_cores": hog.ceiling_cores, "guard": verdict}


def stop_cpu_hog(node: str = "node1", configuration: dict = None) -> dict:
    """End the CPU hog of the node (idempotent): what is left of it killed, its cgroup
    removed. Returns how often its ceiling held it back (cpu.stat)."""
    cluster = cluster_of(configuration)
    target = node_of(cluster, node)
    try:
        out = run_on_node(target, cpu_hog.stop_command(target.name), timeout=30).stdout
    except ClusterError as exc:
        raise fail("stop_cpu_hog", exc) from None
    ledger_restored(cluster, f"cpuhog:{target.name}")
    return {"node": target.name, "stopped": True, **cpu_hog.parse_cpu_stat(out)}


def _hog_scope(cluster: Cluster, a: dict) -> Scope:
    node = cluster.node(str(a["node"]))
    hog = cpu_hog.cpu_hog(node.name, a["workers"], a["load_percent"], a["ceiling_cores"],
                          a["timeout_s"])
    return Scope(f"starves a node of CPU: {hog.says()} (its daemons keep running)")


NOTE = (
    "A CPU hog leaves every daemon up and slows it; the cluster notices only what gets late "
    "enough (Ceph: slow ops or heartbeats). On the lab every node shares the same CPUs, so a "
    "hog on one node slows them all.")
FAULTS = {"hog_cpu": Fault("stop_cpu_hog", _hog_scope, notes={"ceph": NOTE, "swift": NOTE})}
