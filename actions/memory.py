"""A node out of memory, as Chaos Toolkit actions: memory the node cannot give back filled
until the kernel's OOM killer takes some of its daemons (clusters/faults/memory_hog.py), and the
way back: the hog ended and whatever the OOM killer took started again."""

from __future__ import annotations

import time

from chaoslib.exceptions import ActivityFailed

from clusters.access import services
from clusters.access.inventory import Cluster, Node
from clusters.access.ssh import run_on_node
from clusters.exceptions import ClusterError
from clusters.faults import memory_hog

from .fault_spec import Fault, Scope
from .safety import (
    check_blast_radius,
    cluster_of,
    fail,
    fault_action,
    ledger_before,
    ledger_restored,
    node_of,
    recorded,
    refused_record,
)

__all__ = ["exhaust_memory", "stop_memory_hog"]

POLL_S = 0.25
SETTLE_S = 2.0  # the OOM killer often takes several in a row: wait for the last of them


def check_arguments(func: str, arguments: dict, cluster: Cluster) -> None:
    """Before a run: the node exists, the hog is bounded (its size against the node's
    memory is checked when it runs, on the node)."""
    if func not in ("exhaust_memory", "stop_memory_hog"):
        return
    try:
        node = cluster.node(str(arguments.get("node", "node1")))
        if func == "exhaust_memory":
            memory_hog.node_cgroup(node)  # a lab node without a memory cgroup is refused
            memory_hog.check(**{k: arguments[k] for k in ("size_mib", "timeout_s", "wait_s")
                                if k in arguments})
    except ClusterError as exc:
        raise ActivityFailed(str(exc)) from None


def check_live(func: str, arguments: dict, cluster: Cluster) -> None:
    """As a run starts, asking the node (read-only): the hog fits its memory."""
    if func != "exhaust_memory":
        return
    try:
        node = cluster.node(str(arguments.get("node", "node1")))
        memory_hog.memory_hog(node, _memory(node)[0], **{
            k: arguments[k] for k in ("size_mib", "timeout_s") if k in arguments})
    except ClusterError as exc:
        raise ActivityFailed(str(exc)) from None


def _daemons(cluster: Cluster, node: Node) -> dict[str, int]:
    """{daemon: PID} of the node's running daemons: pid files read in one SSH command,
    systemd units one by one."""
    on_node = cluster.services_on(node.name)
    running = memory_hog.parse_daemons(run_on_node(node, memory_hog.daemons_command(
        {s.name: s.pid_file for s in on_node if s.pid_file and not s.unit})).stdout)
    for service in on_node:
        if service.unit:
            pid = services.pid_of(cluster, service)
            if pid is not None:
                running[service.name] = pid
    return running


def _memory(node: Node) -> tuple[int, int, int]:
    return memory_hog.parse_memory(run_on_node(node, memory_hog.memory_command(node)).stdout)


def _wait_for_oom_killer(node: Node, kills_before: int, wait_s: int) -> list[float]:
    """Seconds (from now) at which the OOM killer acted in the node, until it has been quiet
    for SETTLE_S after its last kill, or `wait_s` passed. The kernel may take more than it
    needs (a victim's memory is freed some ms after it is picked, and meanwhile the next
    biggest goes), an SSH session of ours among them: a poll that lost its session is
    asked again."""
    started = time.monotonic()
    seen, at = kills_before, []
    while time.monotonic() - started < wait_s:
        try:
            kills = _memory(node)[2]
        except ClusterError:  # the OOM killer took this SSH session too: ask again
            time.sleep(POLL_S)
            continue
        now = round(time.monotonic() - started, 1)
        at += [now] * (kills - seen)
        seen = kills
        if at and now - at[-1] >= SETTLE_S:
            break
        time.sleep(POLL_S)
    return at


@fault_action
def exhaust_memory(node: str = "node1", size_mib: int = 0, timeout_s: int = 120,
                   wait_s: int = 30, allow_unavailable: bool = False,
                   configuration: dict = None) -> dict:
    """Fill the node's memory with `size_mib` MiB it cannot give back (0: all of it but
    16 MiB for its writer), for at most `timeout_s` seconds, so that the kernel's OOM killer
    kills the node's biggest daemons until the rest fits. Waits up to `wait_s` seconds for
    the OOM killer and returns which daemons it took, when, and the node's memory. Guarded
    as losing the node (the OOM killer may take any daemon of it)."""
    cluster = cluster_of(configuration)
    target = node_of(cluster, node)
    try:
        memory_hog.check(size_mib, timeout_s, wait_s)
        limit_mib, used_mib, kills = _memory(target)
        hog = memory_hog.memory_hog(target, limit_mib, size_mib, timeout_s)
        verdict = check_blast_radius(cluster, f"memory hog on {target.name}",
                                     allow_unavailable, nodes=[target.name])
        before = _daemons(cluster, target)
    except ClusterError as exc:
        raise fail("exhaust_memory", exc) from None
    ledger_before(cluster, f"memory:{target.name}", hog.says(),
                  "actions.memory.stop_memory_hog", {"node": target.name}, {"before": before})
    try:
        run_on_node(target, memory_hog.start_command(hog), timeout=30)
        at = _wait_for_oom_killer(target, kills, wait_s)
        taken = memory_hog.taken(before, _daemons(cluster, target))
        used_after = _memory(target)[1]
    except ClusterError as exc:
        raise fail("exhaust_memory", exc) from None
    # the OOM killer never acting is a fault that did not take: the run says so (invalid)
    missed = None if at else (
        f"the OOM killer took nothing on {target.name} within {wait_s} s: its daemons "
        f"({used_mib} MiB in use) fit beside the {hog.size_mib} MiB hog in its "
        f"{limit_mib} MiB")
    return {"node": target.name, "memory_hog": hog.says(), "size_mib": hog.size_mib,
            "not_taken": missed,
            "node_memory_mib": limit_mib, "used_before_mib": used_mib,
            "used_after_mib": used_after, "oom_kills": len(at), "oom_kill_at_s": at,
            "oom_killed": taken, "daemons_before": before, "guard": verdict}


def _recorded_before(cluster: Cluster, node: Node) -> dict[str, int]:
    """{daemon: PID} of the node's daemons that ran at the injection, as exhaust_memory
    recorded it ({} without a record); a record that is not {daemon: PID} is refused. Only
    the node's own daemons (the inventory's) are ever started from it."""
    key = f"memory:{node.name}"
    before = (recorded(cluster, key) or {}).get("before") or {}
    if not isinstance(before, dict) or any(
            not isinstance(name, str) or isinstance(pid, bool) or not isinstance(pid, int)
            for name, pid in before.items()):
        raise refused_record("stop_memory_hog", key, f"names {before!r}, not the "
                             f"{{daemon: PID}} of {node.name}'s daemons")
    return before


def stop_memory_hog(node: str = "node1", configuration: dict = None) -> dict:
    """End the node's memory hog (idempotent), then start the node's daemons that ran at the
    injection and do not now (those the OOM killer took), as exhaust_memory recorded them in
    the fault ledger; without a record, every daemon of the node that is not running is
    started. Returns what was taken, and what was started."""
    cluster = cluster_of(configuration)
    target = node_of(cluster, node)
    before = _recorded_before(cluster, target)
    try:
        run_on_node(target, memory_hog.stop_command(target), timeout=30)
        running = _daemons(cluster, target)
        taken = memory_hog.taken(before, running)
        on_node = {s.name: s for s in cluster.services_on(target.name)}
        started = memory_hog.to_start(list(on_node), before, running)
        for name in started:
            services.start(cluster, on_node[name])
        kills = _memory(target)[2]
    except ClusterError as exc:
        raise fail("stop_memory_hog", exc) from None
    ledger_restored(cluster, f"memory:{target.name}")
    return {"node": target.name, "stopped": True, "oom_killed": taken,
            "started_by_restore": started, "oom_kills_on_node": kills}


def _hog_scope(cluster: Cluster, a: dict) -> Scope:
    node = cluster.node(str(a["node"]))
    memory_hog.check(size_mib=a["size_mib"], timeout_s=a["timeout_s"], wait_s=a["wait_s"])
    size = f"{a['size_mib']} MiB" if a["size_mib"] else f"all but {memory_hog.RESERVE_MIB} MiB"
    return Scope(f"runs {node.name} out of memory: {size} of it that it cannot give back, for "
                 f"at most {a['timeout_s']} s, until the kernel's OOM killer takes its biggest "
                 "daemons", nodes=(node.name,))


NOTE = (
    "A node out of memory: the kernel's OOM killer kills the node's biggest processes until "
    "the rest fits (SIGKILL, no warning), so what dies depends on what was biggest then; "
    "the memory hog itself is a tmpfs file no process holds, so it is never picked. What it "
    "took stays down until the restore starts it (the lab's daemons have no supervisor).")
FAULTS = {"exhaust_memory": Fault("stop_memory_hog", _hog_scope,
                                  notes={"ceph": NOTE, "swift": NOTE})}
