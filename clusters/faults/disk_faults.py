"""Fail a node's disk for real and bring it back, over SSH on the node that has it.

Failing is what a dead disk does to XFS: `xfs_io -x -c "shutdown -f"` makes every
I/O of the filesystem return EIO at once, then the filesystem is unmounted
(lazily: daemons still hold files there), as an operator or the kernel would.
Restoring mounts it again, which replays the log, so the data is back; or, with
`replace`, a fresh empty filesystem is made first, as after a disk swap.

A disk whose device is a regular file (the lab's loop-mounted images) is
attached to a NEW loop device: the old one still carries the shut-down
filesystem while processes keep files open on it, and `mount -o loop` would hand
that dead instance back. `nouuid`, because that stale instance has the same UUID.
Mounts are read from /proc/mounts: after a shutdown even `stat` of the mount fails.
"""

from __future__ import annotations

import shlex

from clusters.access.inventory import Cluster, Disk
from clusters.access.node_commands import is_mounted
from clusters.access.ssh import run_on_node
from clusters.exceptions import RemoteCommandFailed


def fail_command(disk: Disk) -> str:
    mount = shlex.quote(disk.mount)
    said = shlex.quote(f"{disk.mount} is not mounted")
    return (f"{is_mounted(disk.mount)} || {{ echo {said} >&2; exit 3; }}"
            f"; xfs_io -x -c 'shutdown -f' {mount} && umount -l {mount}")


def restore_command(disk: Disk, replace: bool = False) -> str:
    """Mount the disk again (idempotent: a healthy mount is left alone, and never formatted,
    even with `replace`)."""
    mount, device = shlex.quote(disk.mount), shlex.quote(disk.device)
    mkfs = "mkfs.xfs -q -f \"$dev\" && " if replace else ""
    return (
        # a mount that answers is healthy: nothing to do, and nothing to erase
        f"if {is_mounted(disk.mount)} && ls {mount} >/dev/null 2>&1; then exit 0; fi; "
        f"while {is_mounted(disk.mount)}; do umount -l {mount} || exit 4; done; "
        f"mkdir -p {mount}; "
        f"if [ -f {device} ]; then dev=$(losetup -f --show {device}) || exit 5; "
        f"{mkfs}mount -t xfs -o noatime,nouuid \"$dev\" {mount} "
        f"|| {{ losetup -d \"$dev\"; exit 6; }}; "
        f"else dev={device}; {mkfs}"
        # the mount point as awk data (fstab's second field), never as pattern or shell text
        f"if awk -v m={mount} '$2 == m {{ found = 1 }} END {{ exit !found }}' /etc/fstab "
        "2>/dev/null; "
        f"then mount {mount}; else mount {device} {mount}; fi; fi")


def is_healthy_command(disk: Disk) -> str:
    return (f"{is_mounted(disk.mount)} && ls {shlex.quote(disk.mount)} >/dev/null 2>&1 "
            "&& echo yes || echo no")


def fail(cluster: Cluster, disk: Disk) -> None:
    run_on_node(cluster.node(disk.node), fail_command(disk), timeout=60)


def restore(cluster: Cluster, disk: Disk, replace: bool = False) -> None:
    run_on_node(cluster.node(disk.node), restore_command(disk, replace), timeout=300)


def is_healthy(cluster: Cluster, disk: Disk) -> bool:
    """Mounted and readable (a shut-down XFS fails even `ls`)."""
    out = run_on_node(cluster.node(disk.node), is_healthy_command(disk), timeout=60,
                      check=False).stdout.strip()
    if out not in ("yes", "no"):
        raise RemoteCommandFailed(f"cannot tell whether {disk.mount} on {disk.node} is "
                                  f"healthy: {out!r}")
    return out == "yes"
