"""What an experiment's faults take down on a cluster, in words, before anything runs.

The trigger form's confirmation names the blast radius: for each fault action of the
experiment's method, what it does ("kills osd.1 on node2"), what that takes down in the
guard's terms (OSDs for Ceph, "<ring>:<node>/<device>" keys for Swift, as
actions.safety.taken_down works them out from the inventory) and how it is restored.
Static: from the experiment and the inventory only, no call to the cluster (which may be
busy with another run's fault). The live judgement is the guard's, when the fault action
runs (clusters/safety/guard.py): it refuses a fault that would leave data unavailable or on its
last copy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from actions.safety import taken_down
from clusters.access.inventory import Cluster, Disk, Node
from clusters.exceptions import ClusterError
from clusters.faults.cpu_hog import cpu_hog
from clusters.faults.io_throttle import LIMITS, throttle_of
from clusters.faults.link_faults import link_fault
from clusters.faults.memory_hog import RESERVE_MIB as MEMORY_RESERVE_MIB
from clusters.faults.memory_hog import check as check_memory_hog
from clusters.faults.power import controller_of
from clusters.swift.new_device import scale_device

GUARD_NOTE = ("Before injecting, the guard checks what the fault takes down against where "
              "the copies are and what is down already, and refuses it if data would be left "
              "unavailable or on its last copy.")
# restore actions: described as the way back, not as faults
RESTORES = {"start_osd", "start_daemon", "restore_disk", "power_on_node", "power_on_zone",
            "heal_partition", "remove_fill", "start_server", "resume_osd", "resume_server",
            "restore_corruption", "restore_link", "unthrottle_disk", "stop_cpu_hog",
            "stop_memory_hog", "remove_osd", "remove_device"}

# actions that watch a fault rather than inject one: neither a fault nor its way back
WATCHES = {"detect_and_repair"}


@dataclass(frozen=True)
class FaultScope:
    activity: str  # the activity's name in the experiment, e.g. "kill-osd"
    action: str  # "actions.ceph.kill_osd"
    arguments: dict[str, Any]
    says: str  # "kills osd.1 on node2 (SIGKILL)"
    takes_down: tuple[str, ...] = ()  # "osd.1", "object:node1/d1"
    held_s: float | None = None  # the pause after it, before the method goes on
    restore: str | None = None  # "start-osd: actions.ceph.start_osd(osd_id=1)"
    override: bool = False  # allow_unavailable: injected even if the guard refuses
    problem: str | None = None  # the inventory does not have what it names


def fault_scopes(experiment: dict[str, Any], cluster: Cluster) -> list[FaultScope]:
    """One scope per fault action of the experiment's method, in order."""
    method = experiment.get("method") or []
    # the method's own restore first, else the rollback's (a fill is removed in a rollback)
    restores = [a for a in method + (experiment.get("rollbacks") or [])
                if _func(a) in RESTORES]
    scopes = []
    for activity in method:
        func = _func(activity)
        if activity.get("type") != "action" or func is None or func in RESTORES | WATCHES:
            continue
        provider = activity["provider"]
        arguments = dict(provider.get("arguments") or {})
        try:
            says, nodes, osds, keys = _describe(func, arguments, cluster)
            down_osds, down_keys = taken_down(cluster, nodes, osds, keys)
            takes = tuple([f"osd.{o}" for o in sorted(down_osds)] + sorted(down_keys))
            problem = None
        except ClusterError as exc:
            says, takes, problem = f"{func.replace('_', ' ')} {_args(arguments)}", (), str(exc)
        scopes.append(FaultScope(
            activity=str(activity.get("name")), action=f"{provider['module']}.{func}",
            arguments=arguments, says=says, takes_down=takes,
            held_s=(activity.get("pauses") or {}).get("after"),
            restore=_restore_of(func, arguments, restores),
            override=bool(arguments.get("allow_unavailable")), problem=problem))
    return scopes


def _func(activity: dict[str, Any]) -> str | None:
    provider = activity.get("provider") or {}
    if provider.get("type") != "python" or not str(provider.get("module")).startswith("actions."):
        return None
    return provider.get("func")


def _args(arguments: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in arguments.items() if k != "allow_unavailable")


def _restore_of(func: str, arguments: dict[str, Any], restores: list[dict]) -> str | None:
    pairs = {"kill_osd": "start_osd", "kill_daemon": "start_daemon", "fail_disk": "restore_disk",
             "power_off_node": "power_on_node", "power_off_zone": "power_on_zone",
             "partition_node": "heal_partition", "fill_cluster": "remove_fill",
             "kill_server": "start_server", "hang_osd": "resume_osd",
             "corrupt_replica": "restore_corruption",
             "hang_server": "resume_server", "degrade_link": "restore_link",
             "throttle_disk": "unthrottle_disk", "hog_cpu": "stop_cpu_hog",
             "add_device": "remove_device", "add_osd": "remove_osd",
             "exhaust_memory": "stop_memory_hog"}
    for activity in restores:
        if _func(activity) == pairs.get(func):
            provider = activity["provider"]
            return (f"{activity.get('name')}: {provider['module']}.{provider['func']}"
                    f"({_args(provider.get('arguments') or {})})")
    return None


def _where(node: str | None) -> str:
    return f"on {node}" if node else "on the Faultline machine"


def _disk(cluster: Cluster, node: str, device: str) -> Disk:
    cluster.node(node)
    disks = [d for d in cluster.disks_on(node) if not device or device in (
        d.device, d.mount, d.swift_device, f"osd.{d.osd}" if d.osd is not None else None)]
    if len(disks) != 1:
        raise ClusterError(f"node {node} of {cluster.name} has "
                           f"{'no disk ' + repr(device) if not disks else 'several disks'}")
    return disks[0]


def _power(node: Node) -> str:
    return {"netns": "lab link down", "ipmi": "BMC", "ssh": "nftables over SSH"}.get(
        controller_of(node), controller_of(node))


def _describe(func: str, a: dict[str, Any], cluster: Cluster
              ) -> tuple[str, list[str], set[int], set[str]]:
    """(what it does, nodes it takes, OSDs, Swift ring keys)."""
    if func == "hang_osd":
        osd_id = a.get("osd_id", 1)
        if not isinstance(osd_id, int) or isinstance(osd_id, bool) or osd_id < 0:
            raise ClusterError(f"osd_id must be an OSD's number, not {osd_id!r}")
        service = cluster.service(f"osd.{osd_id}")
        return (f"hangs osd.{osd_id} {_where(service.node)} (SIGSTOP: alive, answering "
                "nothing, until resumed)", [], {osd_id}, set())
    if func == "kill_osd":
        osd_id = a.get("osd_id", -1)
        if isinstance(osd_id, int) and not isinstance(osd_id, bool) and osd_id < 0:
            return "kills one running OSD picked at random (SIGKILL)", [], set(), set()
        if not isinstance(osd_id, int) or isinstance(osd_id, bool):
            raise ClusterError(f"osd_id must be a whole number (-1: any), not {osd_id!r}")
        service = cluster.service(f"osd.{osd_id}")
        return f"kills osd.{osd_id} {_where(service.node)} (SIGKILL)", [], {osd_id}, set()
    if func == "kill_daemon":
        service = cluster.service(str(a.get("daemon", "rgw.lab")))
        return f"kills {service.name} {_where(service.node)} (SIGKILL)", [], set(), set()
    if func in ("kill_server", "hang_server"):
        server, node = str(a.get("server", "object")), str(a.get("node", "node1"))
        does = ("kills", "(SIGKILL)") if func == "kill_server" else \
            ("hangs", "(SIGSTOP: alive, answering nothing, until resumed)")
        if server == "proxy":
            return f"{does[0]} the proxy-server {does[1]}", [], set(), set()
        cluster.node(node)
        keys = {f"{server}:{d.node}/{d.swift_device}" for d in cluster.disks_on(node)
                if d.swift_device}
        return f"{does[0]} {server}-server.{node} {_where(node)} {does[1]}", [], set(), keys
    if func == "fail_disk":
        node = str(a.get("node", "node1"))
        disk = _disk(cluster, node, str(a.get("device", "")))
        owner = f"osd.{disk.osd}" if disk.osd is not None else f"device {disk.swift_device}"
        keys = ({f"{r}:{node}/{disk.swift_device}" for r in ("object", "container", "account")}
                if disk.swift_device else set())
        return (f"fails disk {disk.mount} ({owner}) on {node}: XFS shut down, then unmounted",
                [], {disk.osd} if disk.osd is not None else set(), keys)
    if func == "power_off_node":
        node = cluster.node(str(a.get("node", "node1")))
        return (f"powers off node {node.name} ({_power(node)}): every daemon of it dies",
                [node.name], set(), set())
    if func == "power_off_zone":
        zone = str(a.get("zone", "zone1"))
        nodes = cluster.nodes_in_zone(zone)
        return (f"powers off zone {zone}: {', '.join(n.name for n in nodes)} "
                f"({', '.join(sorted({_power(n) for n in nodes}))})",
                [n.name for n in nodes], set(), set())
    if func == "partition_node":
        node = cluster.node(str(a.get("node", "node1")))
        return (f"cuts node {node.name} off the network (all its traffic but SSH dropped; "
                "its daemons keep running)", [node.name], set(), set())
    if func == "degrade_link":
        fault = link_fault(cluster, node=a.get("node") or "", zones=a.get("zones"),
                           loss_percent=a.get("loss_percent"), cap_mbit=a.get("cap_mbit"),
                           delay_ms=a.get("delay_ms", 0))
        return (f"makes the link lossy: {fault.says()} (nftables in prerouting, or netem "
                "where the node has it; daemons keep running)",
                [fault.node] if fault.node else [], set(), set())
    if func == "hog_cpu":
        node = cluster.node(str(a.get("node", "node1")))
        hog = cpu_hog(node.name, **{k: a[k] for k in ("workers", "load_percent",
                                                      "ceiling_cores", "timeout_s") if k in a})
        return f"starves a node of CPU: {hog.says()} (its daemons keep running)", [], set(), set()
    if func == "exhaust_memory":
        node = cluster.node(str(a.get("node", "node1")))
        check_memory_hog(**{k: a[k] for k in ("size_mib", "timeout_s", "wait_s") if k in a})
        size = f"{a['size_mib']} MiB" if a.get("size_mib") else \
            f"all but {MEMORY_RESERVE_MIB} MiB"
        return (f"runs {node.name} out of memory: {size} of it that it cannot give back, for "
                f"at most {a.get('timeout_s', 120)} s, until the kernel's OOM killer takes "
                "its biggest daemons", [node.name], set(), set())
    if func == "throttle_disk":
        throttle = throttle_of(cluster, a.get("daemon", "osd.1"), **{k: a.get(k) for k in LIMITS})
        service = cluster.service(throttle.daemon)
        osds = {int(service.name.split(".")[1])} if service.kind == "osd" else set()
        ring = service.kind.removesuffix("-server")
        keys = {f"{ring}:{d.node}/{d.swift_device}" for d in cluster.disks_on(service.node)
                if d.swift_device} if not osds else set()
        return (f"slows a disk: {throttle.says()} (cgroup v1 blkio; the daemon stays up)",
                [], osds, keys)
    if func == "corrupt_replica":
        return _corruption(a, cluster)
    if func == "add_device":
        dev = scale_device(cluster, str(a.get("node", "node1")), **{
            k: a[k] for k in ("device", "size_mib", "weight", "rings", "image_dir") if k in a})
        return (f"scales out: adds {dev.says()}, rebalanced and pushed to every node "
                "(takes nothing down; data moves onto it)", [], set(), set())
    if func == "fill_cluster":
        target, size = a.get("target", 0.5), a.get("object_mib", 4)
        where = "the pool's namespace faultline-fill" if cluster.kind == "ceph" \
            else "the container faultline-fill"
        percent = f"{target:.0%}" if isinstance(target, int | float) else repr(target)
        return (f"fills the cluster to {percent} raw usage with {size} MiB objects in {where}",
                [], set(), set())
    return f"{func.replace('_', ' ')} {_args(a)}", [], set(), set()


def _corruption(a: dict[str, Any], cluster: Cluster
                ) -> tuple[str, list[str], set[int], set[str]]:
    """A corrupted replica: what it names, and (Ceph) the OSD stopped while its copy is
    rewritten; a Swift replica is rewritten with its server running."""
    what = a.get("object_name") or "a canary object written for it"
    if cluster.kind == "ceph":
        osd_id = a.get("osd_id", -1)
        if not isinstance(osd_id, int) or isinstance(osd_id, bool) or osd_id < -1:
            raise ClusterError(f"osd_id must be an OSD's number (-1: any), not {osd_id!r}")
        if osd_id >= 0:
            cluster.service(f"osd.{osd_id}")
        which = f"osd.{osd_id}'s copy" if osd_id >= 0 else "one non-primary copy"
        return (f"corrupts {which} of {what}: 16 bytes flipped with ceph-objectstore-tool "
                "while that OSD is stopped, then started again", [],
                {osd_id} if osd_id >= 0 else set(), set())
    node = a.get("node") or ""
    if node:
        cluster.node(str(node))
    which = f"the copy on {node}" if node else "the copy on the ring's last primary node"
    return (f"corrupts {which} of {what}: 16 bytes flipped in its .data file, behind "
            "Swift's back", [], set(), set())
