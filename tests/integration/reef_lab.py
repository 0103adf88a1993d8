"""The container labs in tests (the Reef lab, the current Swift lab): whether their nodes
run, and that `down` left nothing of them."""

from __future__ import annotations

import subprocess
from pathlib import Path
from types import ModuleType

from lab import ceph_reef, disks, nspawn


def _nodes(lab_module: ModuleType) -> list:
    lab = lab_module.lab_at(None)
    return getattr(lab, "all_nodes", lab.nodes)


def nodes_running(lab_module: ModuleType = ceph_reef) -> bool:
    lab = lab_module.lab_at(None)
    return any(nspawn.nspawn_pid(lab.container(n)) for n in _nodes(lab_module))


def assert_nothing_left(result: dict, lab_module: ModuleType = ceph_reef) -> None:
    """`result`: what the lab's `down` returned; then the machine itself is looked at."""
    assert not any(result["leftovers"].values()), result["leftovers"]
    lab = lab_module.lab_at(None)
    assert not disks.mounts_under(lab.home)
    assert not disks.loop_devices_under(lab.home)
    assert not [c for n in _nodes(lab_module) for c in nspawn.leftover_cgroups(lab.container(n))]
    network = lab_module.NETWORK
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    assert network.netns_prefix not in links and f"{network.bridge}:" not in links
    netns_dir = Path("/run/netns")
    assert not (list(netns_dir.glob(f"{network.netns_prefix}*")) if netns_dir.is_dir() else [])
