"""A slow disk: one daemon's I/O to its disk throttled with the cgroup v1 blkio controller.

The daemon (with the processes of its group, if it leads one) moves into a cgroup of our
own, `faultline-throttle-<daemon>` under /sys/fs/cgroup/blkio, whose
`blkio.throttle.{read,write}_{bps,iops}_device` name exactly one device: the block device
mounted on the daemon's disk (a loop device in the lab). Only that daemon's I/O to that
device slows down; its other I/O, the other daemons and the other disks are untouched.
Direct I/O (BlueStore) and the writeback an fsync starts (Swift) are both issued by the
daemon, so both are throttled. The daemon stays up and answers, slowly: the gray failure
of a dying disk.

The restore moves every process of that cgroup back to the cgroup it came from (recorded
before the throttle) and removes ours. A systemd node with cgroup v2 would use the unit's
IOReadBandwidthMax= and friends (`systemctl set-property --runtime`); not built yet: such a
node is refused with the reason.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from dataclasses import dataclass

from clusters.access.inventory import Cluster, Disk, Service
from clusters.exceptions import InvalidThrottle

BLKIO = "/sys/fs/cgroup/blkio"
LIMITS = {"read_bps": "read_bps_device", "write_bps": "write_bps_device",
          "read_iops": "read_iops_device", "write_iops": "write_iops_device"}
MIN_BPS, MAX_BPS = 4096, 10_000_000_000
MIN_IOPS, MAX_IOPS = 1, 1_000_000
# a cgroup path as /proc/<pid>/cgroup prints it: no quote, space or control character
_CGROUP_PATH = re.compile(r"/[A-Za-z0-9_.:@=+,/\\-]*")


@dataclass(frozen=True)
class Throttle:
    daemon: str  # the inventory's service name: "osd.1", "object-server.node1"
    mount: str  # the mount point of its disk
    limits: tuple[tuple[str, int], ...]  # ("write_iops", 10), ... (only those asked)

    @property
    def cgroup(self) -> str:
        return f"{BLKIO}/faultline-throttle-{self.daemon}"

    def says(self) -> str:
        units = {"bps": " B/s", "iops": " IO/s"}
        parts = [f"{k.split('_')[0]} {v}{units[k.split('_')[1]]}" for k, v in self.limits]
        return f"{self.daemon}'s I/O to its disk {self.mount} throttled to {', '.join(parts)}"


def disk_of(cluster: Cluster, service: Service) -> Disk:
    """The disk a storage daemon works on: an OSD's own, a Swift server's node's one."""
    if service.kind == "osd":
        disks = [d for d in cluster.disks if d.osd == int(service.name.split(".")[1])]
    elif service.kind.endswith("-server") and service.node:
        disks = [d for d in cluster.disks_on(service.node) if d.swift_device]
    else:
        raise InvalidThrottle(f"{service.name} is not a storage daemon (an OSD or a Swift "
                              "object, container or account server): it has no disk")
    if len(disks) != 1:
        raise InvalidThrottle(f"{service.name} works on {len(disks)} disks in the inventory: "
                              "throttling one of several is not built")
    return disks[0]


def throttle_of(cluster: Cluster, daemon: str, **limits) -> Throttle:
    """The throttle asked for, checked; InvalidThrottle (or UnknownCluster) with one message."""
    service = cluster.service(str(daemon))
    unknown = [name for name in limits if name not in LIMITS]
    if unknown:
        raise InvalidThrottle(f"unknown limit {unknown[0]!r} (limits: {', '.join(LIMITS)})")
    asked = []
    for name in LIMITS:
        value = limits.get(name)
        if value is None or value == 0:
            continue
        low, high = (MIN_BPS, MAX_BPS) if name.endswith("bps") else (MIN_IOPS, MAX_IOPS)
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise InvalidThrottle(f"{name} must be a whole number from {low} to {high} "
                                  f"(0: no limit), not {value!r}")
        asked.append((name, value))
    if not asked:
        raise InvalidThrottle("a throttle needs a limit: read_bps, write_bps, read_iops or "
                              "write_iops")
    return Throttle(service.name, disk_of(cluster, service).mount, tuple(asked))


def _device(mount: str) -> str:
    """Shell: $mm is the MAJ:MIN of the block device mounted on `mount`."""
    m = shlex.quote(mount)
    return (f"[ -d {BLKIO} ] || {{ echo 'no cgroup v1 blkio controller at {BLKIO}' >&2; "
            f"exit 3; }}; dev=$(awk -v m={m} '$2 == m {{d = $1}} END {{print d}}' /proc/mounts); "
            f"[ -b \"$dev\" ] || {{ echo 'no block device is mounted on '{m} >&2; exit 3; }}; "
            "mm=$(lsblk -dno MAJ:MIN \"$dev\" | tr -d ' ')")


def origin_command(pid: int) -> str:
    """Shell: the blkio cgroup the process is in now (where the restore puts it back)."""
    return f"sed -n 's/^[0-9]*:blkio:\\(.*\\)$/\\1/p' /proc/{pid}/cgroup"


def checked_origin(daemon: str, pid: int, origin: str) -> str:
    """The blkio cgroup origin_command printed, where the restore will put the daemon back;
    InvalidThrottle when there is none, or when it is our own (throttled already: recording
    that as its origin would make the restore put it back under the throttle)."""
    if not origin.startswith("/"):
        raise InvalidThrottle(f"{daemon} (PID {pid}) is in no cgroup v1 blkio hierarchy: this "
                              "node cannot be throttled this way")
    if origin.rstrip("/").rsplit("/", 1)[-1].startswith("faultline-throttle-"):
        raise InvalidThrottle(f"{daemon} (PID {pid}) is throttled already ({BLKIO}{origin}): "
                              "unthrottle_disk first")
    return confined_origin(origin)


def confined_origin(origin: object) -> str:
    """`origin` once it is seen to be a cgroup of the blkio hierarchy, where the restore may
    move a daemon back: an absolute, normalised path (no `..`, no `//`), of plain
    characters, not one of our throttle cgroups; InvalidThrottle otherwise."""
    if not isinstance(origin, str) or not _CGROUP_PATH.fullmatch(origin) or (
            origin != "/" and posixpath.normpath(origin) != origin.rstrip("/")) \
            or ".." in origin.split("/") or "//" in origin:
        raise InvalidThrottle(f"{origin!r} is not a cgroup under {BLKIO} (an absolute path "
                              "with no '..')")
    if "/faultline-throttle-" in origin:
        raise InvalidThrottle(f"{origin!r} is a throttle cgroup of ours, not where a daemon "
                              "came from")
    return origin


def throttle_command(throttle: Throttle, pid: int) -> str:
    """Shell: make our cgroup, set its limits on the disk's device, move the daemon (and its
    process group, if it leads one) in; prints the device's MAJ:MIN."""
    cg = shlex.quote(throttle.cgroup)
    limits = "; ".join(f"echo \"$mm {v}\" > {cg}/blkio.throttle.{LIMITS[k]}"
                       for k, v in throttle.limits)
    return (f"{_device(throttle.mount)}; mkdir -p {cg}; {limits}; "
            f"if [ \"$(ps -o pgid= -p {pid} | tr -d ' ')\" = {pid} ]; then pids=$(pgrep -g "
            f"{pid}); else pids={pid}; fi; for p in $pids; do echo $p > {cg}/cgroup.procs; "
            "done; echo $mm")


def release_command(daemon: str, back_to: str = "/") -> str:
    """Shell: every process of our cgroup back to `back_to`, our cgroup removed (idempotent;
    a process that ended meanwhile is skipped)."""
    cg = shlex.quote(f"{BLKIO}/faultline-throttle-{daemon}")
    target = shlex.quote(f"{BLKIO}{confined_origin(back_to).rstrip('/')}/cgroup.procs")
    return (f"if [ -d {cg} ]; then for p in $(cat {cg}/cgroup.procs); do "
            f"echo $p > {target} 2>/dev/null || echo $p > {BLKIO}/cgroup.procs 2>/dev/null "
            f"|| true; done; rmdir {cg}; fi")


def stats_command(daemon: str) -> str:
    """Shell: bytes and operations our cgroup's processes did per device (empty without it)."""
    cg = shlex.quote(f"{BLKIO}/faultline-throttle-{daemon}")
    return (f"cat {cg}/blkio.throttle.io_service_bytes {cg}/blkio.throttle.io_serviced "
            "2>/dev/null; true")


def parse_stats(text: str) -> dict[str, int]:
    """`io_service_bytes` then `io_serviced` -> {"bytes": total, "ios": total}."""
    totals = []
    for line in text.splitlines():
        words = line.split()
        if len(words) == 2 and words[0] == "Total":
            totals.append(int(words[1]))
    return {"bytes": totals[0] if totals else 0, "ios": totals[1] if len(totals) > 1 else 0}
