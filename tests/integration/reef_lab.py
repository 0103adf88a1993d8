"""The Reef lab in tests: whether its nodes run, and that `down` left nothing of it."""

from __future__ import annotations

import subprocess
from pathlib import Path

from lab import ceph_reef, disks, nspawn


def nodes_running() -> bool:
    lab = ceph_reef.lab_at(None)
    return any(nspawn.nspawn_pid(lab.container(n)) for n in lab.nodes)


def assert_nothing_left(result: dict) -> None:
    """`result`: what ceph_reef.down returned; then the machine itself is looked at."""
    assert not any(result["leftovers"].values()), result["leftovers"]
    lab = ceph_reef.lab_at(None)
    assert not disks.mounts_under(lab.home)
    assert not disks.loop_devices_under(lab.home)
    assert not [c for n in lab.nodes for c in nspawn.leftover_cgroups(lab.container(n))]
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    assert "flreef" not in links and "flbr2" not in links
    netns_dir = Path("/run/netns")
    assert not (list(netns_dir.glob("flreef*")) if netns_dir.is_dir() else [])
