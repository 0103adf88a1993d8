"""What every lab's `down` does after its daemons stopped: free the disks, remove the
network, optionally delete the data; and what of a lab is still on the machine. Shared by
the Ceph and the Swift lab."""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from clusters.polling import PollTimeout, poll_until

from . import disks, netns, procs
from .exceptions import LabError

RELEASE_S = 15.0  # for the kernel to free devices a lazy umount left busy


def release_disks(home: Path) -> None:
    """Unmount everything under the lab's home and detach every loop device of its images.
    A device still held after a lazy umount is only marked to go (autoclear): wait a little
    for it, so that what `down` reports left is what really stays (make bench, 2026-11-28:
    eight devices reported left were gone a minute later)."""
    for mount_point in disks.mounts_under(home):
        disks.unmount(mount_point)
    for device in disks.loop_devices_under(home):
        disks.detach(device)
    try:
        poll_until("the lab's loop devices to be freed",
                   lambda: not disks.loop_devices_under(home), RELEASE_S, 0.5)
    except PollTimeout:
        pass  # reported by `leftovers`, with the devices' names


def remove(home: Path, network: netns.LabNetwork, purge: bool) -> list[int]:
    """Free the disks, delete the network (and the data if `purge`); return the PIDs of
    processes that were still in the lab's namespaces (not ours: we only signal PIDs of
    our pid files)."""
    release_disks(home)
    stray = [pid for ns in netns.existing_namespaces(network) for pid in netns.pids_in(ns)]
    netns.delete_network(network)
    if purge:
        if disks.mounts_under(home):  # never delete through a live mount
            raise LabError(f"not purging {home}: still mounted: {disks.mounts_under(home)}")
        shutil.rmtree(home, ignore_errors=True)
    return stray


def leftovers(home: Path, network: netns.LabNetwork, pid_files: list[Path]) -> dict[str, list]:
    """What of a lab is still on the machine (its daemons by their pid files, processes in its
    namespaces, mounts and loop devices under its home, its namespaces and links): all lists
    are empty after a clean `down`."""
    return {
        "processes": [str(p) for p in pid_files if procs.alive_pid(p) is not None],
        "namespace_processes": [pid for ns in netns.existing_namespaces(network)
                                for pid in netns.pids_in(ns)],
        "mounts": disks.mounts_under(home),
        "loop_devices": disks.loop_devices_under(home),
        "namespaces": netns.existing_namespaces(network),
        "links": netns.leftover_links(network),
    }


def finish_down(home: Path, network: netns.LabNetwork, purge: bool, started: float,
                stopped: dict[str, str], left_of: Callable[[], dict[str, list]]) -> dict[str, Any]:
    """The rest of a lab's `down` once its daemons stopped (`remove`), and its report: how
    long it took (from `started`, a monotonic time), what was stopped, and what is left."""
    stray = remove(home, network, purge)
    left = left_of()
    if stray:
        # started by someone else in our namespaces; we only signal PIDs we started
        left["namespace_processes"] = stray
    return {"seconds": round(time.monotonic() - started, 1), "stopped": stopped,
            "purged": purge, "leftovers": left}
