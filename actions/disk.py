"""Disk failure and its restore, as Chaos Toolkit actions (Ceph and Swift alike).

fail_disk shuts the disk's XFS down (every I/O returns EIO, as on a dead disk)
and unmounts it; the daemon on it notices by itself (a Ceph OSD aborts on its
first failed write; Swift's servers answer 507 for the device and recon reports
it unmounted). restore_disk mounts it again (log replay: the data is back) or,
with `replace`, makes a fresh empty filesystem first, as after a disk swap
(Swift only: its replicators refill the device), then starts what the failure
stopped.

restore_disk acts only on a disk the fault ledger says fail_disk failed (its entry's record
names the inventory's device and mount), and formats one only while it is still failed and
the blast-radius guard allows losing its copies; with no such entry it touches nothing and
says so, so a rollback or an uploaded experiment cannot make it format a healthy disk.
"""

from __future__ import annotations

from chaoslib.exceptions import ActivityFailed

from clusters.access import services
from clusters.access.inventory import Cluster, Disk
from clusters.exceptions import ClusterError
from clusters.faults import disk_faults

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

__all__ = ["fail_disk", "restore_disk"]


def _disk(cluster: Cluster, node: str, device: str) -> Disk:
    """The node's disk named by `device` (path, mount point, "osd.N" or Swift device name);
    with `device` empty, the node's only disk."""
    node_of(cluster, node)  # "no node X (nodes: ...)" before "no disk"
    disks = cluster.disks_on(node)
    if device:
        disks = [d for d in disks if device in (d.device, d.mount, d.swift_device,
                                                 f"osd.{d.osd}" if d.osd is not None else None)]
    if len(disks) != 1:
        names = ", ".join(d.swift_device or (f"osd.{d.osd}" if d.osd is not None else d.device)
                          for d in cluster.disks_on(node)) or "none"
        which = f"no disk {device!r}" if not disks else "more than one disk; name one"
        raise ActivityFailed(f"node {node} of {cluster.name} has {which} (disks: {names})")
    return disks[0]


def _key(disk: Disk) -> str:
    return f"disk:{disk.node}:{disk.mount}"


def _label(disk: Disk) -> str:
    owner = f"osd.{disk.osd}" if disk.osd is not None else f"device {disk.swift_device}"
    return f"disk {disk.mount} ({owner}) on {disk.node}"


def _record(disk: Disk) -> dict:
    """What fail_disk writes down as failed: the inventory's device and mount."""
    return {"device": disk.device, "mount": disk.mount}


def _swift_keys(disk: Disk) -> set[str]:
    if disk.swift_device is None:
        return set()
    return {f"{ring}:{disk.node}/{disk.swift_device}" for ring in ("object", "container",
                                                                    "account")}


def check_arguments(func: str, arguments: dict, cluster: Cluster) -> None:
    """Before a run: the node and its disk exist."""
    if func in ("fail_disk", "restore_disk"):
        _disk(cluster, str(arguments.get("node", "node1")), str(arguments.get("device", "")))
    if func == "restore_disk" and arguments.get("replace") and cluster.kind == "ceph":
        raise ActivityFailed("replace is supported for Swift devices only (a Ceph OSD on a "
                             "new disk must be recreated with ceph-volume)")


@fault_action
def fail_disk(node: str = "node1", device: str = "", allow_unavailable: bool = False,
              configuration: dict = None) -> dict:
    """Fail one disk of `node` for real: XFS shutdown (every I/O gets EIO), then unmount.
    `device` names the disk when the node has several (path, mount, "osd.N" or Swift
    device name). Refused if it would leave data unavailable or with one copy, unless
    allow_unavailable."""
    cluster = cluster_of(configuration)
    disk = _disk(cluster, node, device)
    verdict = check_blast_radius(cluster, f"fail {_label(disk)}", allow_unavailable,
                                 osds={disk.osd} if disk.osd is not None else set(),
                                 swift_keys=_swift_keys(disk) if cluster.kind == "swift"
                                 else set())
    ledger_before(cluster, _key(disk), f"failed {_label(disk)} (XFS shut down, unmounted)",
                  "actions.disk.restore_disk", {"node": node, "device": disk.mount},
                  _record(disk))
    try:
        disk_faults.fail(cluster, disk)
    except ClusterError as exc:
        raise fail("fail_disk", exc) from None
    return {"node": disk.node, "mount": disk.mount, "osd": disk.osd,
            "swift_device": disk.swift_device, "guard": verdict}


def restore_disk(node: str = "node1", device: str = "", replace: bool = False,
                 configuration: dict = None) -> dict:
    """Bring a disk that fail_disk failed back: mount it again (the data is back after log
    replay) or, with replace, a fresh empty filesystem (Swift only; refused by the guard
    when the other copies of its data are not enough), then start the daemons it stopped.
    Only a disk the fault ledger says was failed is touched: with no such entry nothing is
    unmounted, formatted or started, and the result says so; a healthy disk is never
    formatted."""
    cluster = cluster_of(configuration)
    disk = _disk(cluster, node, device)
    check_arguments("restore_disk", {"node": node, "device": device, "replace": replace},
                    cluster)
    key = _key(disk)
    record = recorded(cluster, key)
    if record is None:
        return {"node": disk.node, "mount": disk.mount, "remounted": False, "replaced": False,
                "started": [], "note": f"no failure of {_label(disk)} in the fault ledger: "
                                       "nothing was unmounted, formatted or started"}
    # an entry written before the record kept none; one with a record must name this disk
    if record and record != _record(disk):
        raise refused_record("restore_disk", key, f"names {record!r}, not the inventory's "
                                                  f"{_record(disk)!r}")
    restarted = []
    verdict = None
    try:
        failed = not disk_faults.is_healthy(cluster, disk)
        replaced = bool(replace) and failed  # a healthy disk keeps its data
        if replaced:
            verdict = check_blast_radius(cluster, f"replace {_label(disk)} (its copies are "
                                         "erased)", False, swift_keys=_swift_keys(disk))
        if failed and disk.osd is not None:
            # an OSD still running holds the dead filesystem: it must start anew
            osd = cluster.service(f"osd.{disk.osd}")
            if services.pid_of(cluster, osd) is not None:
                services.kill(cluster, osd, "KILL")
        if failed:
            disk_faults.restore(cluster, disk, replaced)
        owners = ([cluster.service(f"osd.{disk.osd}")] if disk.osd is not None
                  else cluster.services_on(disk.node))
        for service in owners:
            if services.pid_of(cluster, service) is None:
                services.start(cluster, service)
                restarted.append(service.name)
    except ClusterError as exc:
        raise fail("restore_disk", exc) from None
    ledger_restored(cluster, key)
    out = {"node": disk.node, "mount": disk.mount, "remounted": failed,
           "replaced": replaced, "started": restarted, "guard": verdict}
    if replace and not replaced:
        out["note"] = f"{_label(disk)} was healthy: not replaced"
    return out


def _fail_disk_scope(cluster: Cluster, a: dict) -> Scope:
    disk = _disk(cluster, str(a["node"]), str(a["device"]))
    return Scope(f"fails {_label(disk)}: XFS shut down, then unmounted",
                 osds=frozenset({disk.osd} if disk.osd is not None else ()),
                 keys=frozenset(_swift_keys(disk)))


FAULTS = {"fail_disk": Fault("restore_disk", _fail_disk_scope, notes={"swift": (
    "A failed device answers 507 and the proxy writes its copies to handoffs; Swift does not "
    "rebuild them elsewhere until the device is removed from the ring, so redundancy returns "
    "only after the remount (or a replaced, empty device is refilled by the replicators).")})}
