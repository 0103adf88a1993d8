"""A slow disk, as Chaos Toolkit actions: one storage daemon's I/O to its disk throttled
(cgroup v1 blkio on the node: clusters/faults/io_throttle.py), and the throttle lifted.

The daemon stays up and keeps answering, slowly: heartbeats and health checks that do not
touch the disk say it is fine while its clients wait.

Where the restore puts the daemon back is the fault ledger's record of the cgroup it came
from (an absolute blkio path with no `..`: clusters.faults.io_throttle.confined_origin), never a
path from the caller.
"""

from __future__ import annotations

from chaoslib.exceptions import ActivityFailed

from clusters.access import services
from clusters.access.inventory import Cluster, Service
from clusters.exceptions import ClusterError, InvalidThrottle, RemoteCommandFailed
from clusters.faults import io_throttle

from .fault_spec import Fault, Scope
from .safety import (
    check_blast_radius,
    cluster_of,
    fail,
    fault_action,
    ledger_before,
    ledger_restored,
    recorded,
    refused_record,
)

__all__ = ["throttle_disk", "unthrottle_disk"]


def check_arguments(func: str, arguments: dict, cluster: Cluster) -> None:
    """Before a run: the daemon is a storage daemon of the inventory, the limits make sense."""
    try:
        if func == "throttle_disk":
            io_throttle.throttle_of(cluster, arguments.get("daemon", "osd.1"),
                                    **{k: arguments.get(k) for k in io_throttle.LIMITS})
        elif func == "unthrottle_disk":
            cluster.service(str(arguments.get("daemon", "osd.1")))
    except ClusterError as exc:
        raise ActivityFailed(str(exc)) from None


def _taken(cluster: Cluster, service: Service) -> tuple[set[int], set[str]]:
    """What a throttled daemon counts as taken, for the guard: its OSD, or its server's
    ring keys on its node."""
    if service.kind == "osd":
        return {int(service.name.split(".")[1])}, set()
    ring = service.kind.removesuffix("-server")
    return set(), {f"{ring}:{d.node}/{d.swift_device}" for d in cluster.disks_on(service.node)
                   if d.swift_device}


def _guard(cluster: Cluster, service: Service, what: str, allow_unavailable: bool) -> dict:
    """As if the daemon were down: a disk slow enough may get it marked down, or its
    requests timed out."""
    osds, keys = _taken(cluster, service)
    return check_blast_radius(cluster, what, allow_unavailable, osds=osds, swift_keys=keys)


@fault_action
def throttle_disk(daemon: str = "osd.1", read_bps: int = 0, write_bps: int = 0,
                  read_iops: int = 0, write_iops: int = 0, allow_unavailable: bool = False,
                  configuration: dict = None) -> dict:
    """Throttle one storage daemon's I/O to its disk (an OSD, or a Swift object, container
    or account server, by its inventory name) to the limits given (bytes or operations per
    second; 0: no limit), with the cgroup v1 blkio controller on its node. Guarded as if
    the daemon were down. Returns the device throttled and the cgroup the daemon came
    from."""
    cluster = cluster_of(configuration)
    try:
        throttle = io_throttle.throttle_of(cluster, daemon, read_bps=read_bps,
                                           write_bps=write_bps, read_iops=read_iops,
                                           write_iops=write_iops)
        service = cluster.service(throttle.daemon)
        pid = services.pid_of(cluster, service)
        if pid is None:
            raise RemoteCommandFailed(f"{service.name} is not running: nothing to throttle")
        back_to = io_throttle.checked_origin(
            service.name, pid,
            services.run(cluster, service, io_throttle.origin_command(pid)).stdout.strip())
        verdict = _guard(cluster, service, f"throttle {service.name}'s disk", allow_unavailable)
    except ClusterError as exc:
        raise fail("throttle_disk", exc) from None
    ledger_before(cluster, f"throttle:{service.name}", throttle.says(),
                  "actions.throttle.unthrottle_disk", {"daemon": service.name},
                  {"back_to": back_to})
    try:
        device = services.run(cluster, service,
                              io_throttle.throttle_command(throttle, pid)).stdout.strip()
    except ClusterError as exc:
        raise fail("throttle_disk", exc) from None
    return {"daemon": service.name, "node": service.node, "pid": pid, "mount": throttle.mount,
            "device": device, "limits": dict(throttle.limits), "cgroup": throttle.cgroup,
            "back_to": back_to, "throttled": throttle.says(), "guard": verdict}


def unthrottle_disk(daemon: str = "osd.1", configuration: dict = None) -> dict:
    """Lift the throttle of throttle_disk (idempotent): the daemon back in the cgroup it came
    from, as throttle_disk recorded it in the fault ledger (the root without a record), ours
    removed. Returns what its I/O through the throttle amounted to."""
    cluster = cluster_of(configuration)
    try:
        service = cluster.service(str(daemon))
        back_to = _recorded_origin(cluster, service)
        stats = io_throttle.parse_stats(
            services.run(cluster, service, io_throttle.stats_command(service.name)).stdout)
        services.run(cluster, service, io_throttle.release_command(service.name, back_to))
    except ClusterError as exc:
        raise fail("unthrottle_disk", exc) from None
    ledger_restored(cluster, f"throttle:{service.name}")
    return {"daemon": service.name, "unthrottled": True, "throttled_bytes": stats["bytes"],
            "throttled_ios": stats["ios"]}


def _recorded_origin(cluster: Cluster, service: Service) -> str:
    """The cgroup throttle_disk found the daemon in (its ledger record), "/" without one: an
    experiment's rollback names only the daemon, and must not leave it in the root cgroup.
    A record that is no blkio cgroup path is refused."""
    key = f"throttle:{service.name}"
    origin = (recorded(cluster, key) or {}).get("back_to") or "/"
    try:
        return io_throttle.confined_origin(origin)
    except InvalidThrottle as exc:
        raise refused_record("unthrottle_disk", key, f"names back_to {origin!r}: {exc}") from None


def _throttle_scope(cluster: Cluster, a: dict) -> Scope:
    throttle = io_throttle.throttle_of(cluster, a["daemon"],
                                       **{k: a[k] for k in io_throttle.LIMITS})
    osds, keys = _taken(cluster, cluster.service(throttle.daemon))
    return Scope(f"slows a disk: {throttle.says()} (cgroup v1 blkio; the daemon stays up)",
                 osds=frozenset(osds), keys=frozenset(keys))


FAULTS = {"throttle_disk": Fault("unthrottle_disk", _throttle_scope, notes={
    "ceph": (
        "A throttled OSD stays up: its heartbeats do not touch the disk, so the monitors see "
        "nothing, while writes to its PGs wait for it (every copy is written before the "
        "acknowledgement). Ceph reports it only as slow ops (SLOW_OPS), once an operation "
        "waited osd_op_complaint_time (30 s)."),
    "swift": (
        "A throttled object server stays up and answers its healthcheck; writes need a quorum "
        "of copies and go on with the others, reads sent to it wait for its disk.")})}
