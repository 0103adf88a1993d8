"""Scale a Swift cluster out and back in: one new device on an existing storage node.

Out: a sparse image file with a fresh XFS filesystem, loop-mounted in the node's devices
directory (where its servers look for devices, with mount_check), added to the rings,
rebalanced, and the rings pushed to every storage node. In: the device's weight set to 0,
rebalanced and pushed (a drain), then, once replication has moved every partition off it,
removed from the rings, pushed again, unmounted, and its image deleted.

By default only the object ring gets the device: the account and container rings are
usually kept on their own (often faster) disks, and a new disk is for object capacity;
`rings` may name them too, as for a small cluster whose disks hold all three.

Pushing writes each ring whole beside the old one and renames it over it, on every node
(`client.node_swift_dir`, else the inventory's `client.swift_dir`); Swift's servers and
daemons notice a changed ring file within RING_RELOAD_S (Swift's Ring reload_time).

Devices scale adds are named `scale-...` and carry a marker in their ring entry; scale
removes no other device.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
import shlex
from dataclasses import dataclass

from clusters.access.inventory import Cluster, Disk
from clusters.access.node_commands import is_mounted
from clusters.exceptions import InvalidScale

RINGS = ("object", "container", "account")
PREFIX = "scale-"
NAME = re.compile(r"^scale-[a-z0-9][a-z0-9_-]{0,40}$")
MIN_SIZE_MIB, MAX_SIZE_MIB = 64, 1024 * 1024
MAX_WEIGHT = 100_000.0
RING_RELOAD_S = 15  # swift.common.ring.ring.DEFAULT_RELOAD_TIME


@dataclass(frozen=True)
class ScaleDevice:
    """A device scale adds (or added) on one node, and where it lives there."""

    node: str
    address: str
    zone: int
    device: str
    mount: str
    image: str
    size_mib: int
    weight: float
    rings: tuple[str, ...]

    def says(self) -> str:
        return (f"device {self.device} ({self.size_mib} MiB image {self.image}, weight "
                f"{self.weight:g}) added to the {'/'.join(self.rings)} ring(s) on "
                f"{self.node}, mounted at {self.mount}")


def device_name(node: str, device: str = "") -> str:
    """The device's name: `device` (which must start with scale-), else scale-<node>."""
    name = device or f"{PREFIX}{node.lower()}"
    if not isinstance(name, str) or not NAME.match(name):
        raise InvalidScale(f"device must be a name starting with {PREFIX!r} (a device scale "
                           f"adds; letters, digits, - and _), not {device!r}")
    return name


def _swift_disk(cluster: Cluster, node: str) -> Disk:
    disks = [d for d in cluster.disks_on(node) if d.swift_device]
    if not disks:
        raise InvalidScale(f"node {node} of {cluster.name} holds no Swift device in the "
                           "inventory: its devices directory is unknown")
    return disks[0]


def check_rings(rings) -> tuple[str, ...]:
    if not isinstance(rings, list | tuple) or not rings or \
            any(r not in RINGS for r in rings) or len(set(rings)) != len(rings):
        raise InvalidScale(f"rings must be a list of distinct ring names from "
                           f"{', '.join(RINGS)}, not {rings!r}")
    return tuple(rings)


def check_size(size_mib) -> int:
    if isinstance(size_mib, bool) or not isinstance(size_mib, int) or \
            not MIN_SIZE_MIB <= size_mib <= MAX_SIZE_MIB:
        raise InvalidScale(f"size_mib must be a whole number of MiB from {MIN_SIZE_MIB} to "
                           f"{MAX_SIZE_MIB}, not {size_mib!r}")
    return size_mib


def check_weight(weight) -> float:
    if isinstance(weight, bool) or not isinstance(weight, int | float) or \
            not 0 < weight <= MAX_WEIGHT:  # NaN fails both comparisons
        raise InvalidScale(f"weight must be a number above 0 and at most {MAX_WEIGHT:g}, "
                           f"not {weight!r}")
    return float(weight)


def check_image_dir(image_dir: object) -> str:
    """An image directory given to add_device (or recorded by it): the restore deletes
    <image_dir>/<device>.img, so it must be a normalised absolute path."""
    if not isinstance(image_dir, str) or not os.path.isabs(image_dir):
        raise InvalidScale(f"image_dir must be an absolute path, not {image_dir!r}")
    if os.path.normpath(image_dir) != image_dir.rstrip("/") or image_dir.startswith("//"):
        raise InvalidScale(f"image_dir must be a normalised absolute path (no '..', '.' or "
                           f"'//'), not {image_dir!r}")
    return image_dir


def zone_number(cluster: Cluster, node: str, ring_zones: dict[str, int]) -> int:
    """The ring zone of the node's existing device (a new device joins its node's zone)."""
    zone = ring_zones.get(cluster.node(node).address)
    if zone is None:
        raise InvalidScale(f"node {node} ({cluster.node(node).address}) holds no device of "
                           "the object ring: scale adds devices to existing storage nodes")
    return zone


def scale_device(cluster: Cluster, node: str, device: str = "", size_mib=1024, weight=100,
                 rings=("object",), image_dir: str = "", zone: int = 0) -> ScaleDevice:
    """The device asked for, checked against the inventory; InvalidScale otherwise.

    It is mounted in the directory that holds the node's Swift device (the servers' devices
    directory). Its image goes into `image_dir`, by default the directory of that device's
    image when the inventory's device is an image file (the lab's); a block device there
    needs `image_dir`."""
    if cluster.kind != "swift":
        raise InvalidScale(f"{cluster.name} is a {cluster.kind} cluster, not Swift")
    if not isinstance(node, str) or node not in cluster.node_names:
        raise InvalidScale(f"cluster {cluster.name!r} has no node {node!r} "
                           f"(nodes: {', '.join(cluster.node_names)})")
    name = device_name(node, device)
    disk = _swift_disk(cluster, node)
    if not image_dir:
        if disk.device.startswith("/dev/"):
            raise InvalidScale(f"{node}'s Swift disk is the block device {disk.device}: give "
                               "image_dir, a directory on the node for the new disk's image")
        image_dir = os.path.dirname(disk.device)
    check_image_dir(image_dir)
    return ScaleDevice(node=node, address=cluster.node(node).address, zone=zone, device=name,
                       mount=os.path.join(os.path.dirname(disk.mount), name),
                       image=os.path.join(image_dir, f"{name}.img"),
                       size_mib=check_size(size_mib), weight=check_weight(weight),
                       rings=check_rings(rings))


def create_command(dev: ScaleDevice) -> str:
    """Shell on the node: make the image (whole or not at all), mount it on a new loop device.
    Refuses (exit 3) a mount point or image that is there already."""
    image, mount = shlex.quote(dev.image), shlex.quote(dev.mount)
    partial = shlex.quote(dev.image + ".partial")
    return (
        f"[ -d {shlex.quote(os.path.dirname(dev.mount))} ] || {{ echo "
        f"{shlex.quote(f'no devices directory {os.path.dirname(dev.mount)}')} >&2; exit 3; }}; "
        f"if {is_mounted(dev.mount)}; then echo {shlex.quote(f'{dev.mount} is mounted already')} "
        ">&2; exit 3; fi; "
        f"[ -e {image} ] && {{ echo {shlex.quote(f'{dev.image} exists already')} >&2; exit 3; }}; "
        f"mkdir -p {shlex.quote(os.path.dirname(dev.image))} {mount} && "
        f"truncate -s {dev.size_mib}M {partial} && mkfs.xfs -q -f {partial} && "
        f"mv {partial} {image} && d=$(losetup -f --show {image}) && "
        f"{{ mount -t xfs -o noatime \"$d\" {mount} || {{ losetup -d \"$d\"; exit 6; }}; }}")


def delete_command(mount: str, image: str) -> str:
    """Shell on the node: unmount (lazily if a daemon still holds it after ~10 s), free the
    loop device, delete the image and the mount point; idempotent. Prints what was there."""
    m, img = shlex.quote(mount), shlex.quote(image)
    return (
        f"if {is_mounted(mount)}; then echo mounted; fi; "
        f"for i in $(seq 1 20); do {is_mounted(mount)} || break; umount {m} 2>/dev/null "
        f"|| sleep 0.5; done; while {is_mounted(mount)}; do umount -l {m} || exit 4; done; "
        f"for d in $(losetup -j {img} | cut -d: -f1); do losetup -d \"$d\"; done; "
        f"[ -e {img} ] && echo image; rm -f {img} {shlex.quote(image + '.partial')}; "
        f"[ -d {m} ] && rmdir {m}; true")


def present_command(mount: str, image: str) -> str:
    """Shell on the node: prints `mounted` and/or `image` for what is there."""
    return (f"if {is_mounted(mount)}; then echo mounted; fi; "
            f"[ -e {shlex.quote(image)} ] && echo image; true")


def partitions_command(mount: str, rings: tuple[str, ...]) -> str:
    """Shell on the node: one line per partition directory on the device, `ring partition`."""
    return "; ".join(f"ls -1 {shlex.quote(os.path.join(mount, ring + 's'))} 2>/dev/null | "
                     f"sed -n 's/^\\([0-9][0-9]*\\)$/{ring} \\1/p'" for ring in rings)


def parse_partitions(text: str) -> dict[str, int]:
    """Partition directories per ring from partitions_command's output."""
    counts: dict[str, int] = {}
    for line in text.splitlines():
        ring, _, part = line.partition(" ")
        if ring in RINGS and part.isdigit():
            counts[ring] = counts.get(ring, 0) + 1
    return counts


PUSH_CHUNK = 48 * 1024  # bytes per command: Linux takes at most 128 KiB in one argument


def push_commands(ring_dir: str, ring_type: str, content: bytes) -> list[str]:
    """Shell on the node, in order: write the ring beside the old one in pieces (a command
    line holds only so much), rename it over the old one (servers never read half a ring),
    print its SHA-256 as it landed."""
    target = shlex.quote(os.path.join(ring_dir, f"{ring_type}.ring.gz"))
    partial = shlex.quote(os.path.join(ring_dir, f".{ring_type}.ring.gz.faultline-push"))
    pieces = [content[i:i + PUSH_CHUNK] for i in range(0, len(content), PUSH_CHUNK)] or [b""]
    encoded = [base64.b64encode(piece).decode() or "''" for piece in pieces]
    commands = [f"printf %s {text} | base64 -d {'>' if i == 0 else '>>'} {partial}"
                for i, text in enumerate(encoded)]
    return commands + [f"mv -f {partial} {target} && sha256sum {target} | cut -d' ' -f1"]


def digest(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()
