"""The shell commands behind disk failure and node isolation, run for real on this machine:
a loop-mounted XFS image shut down, unmounted, mounted again (data back) or replaced (empty),
and the nftables isolation installed and removed in a network namespace of the test's own.
No lab is needed; root, loop devices and nftables are."""

from __future__ import annotations

import os
import subprocess
import uuid
from pathlib import Path

import pytest

from clusters.access.inventory import Disk
from clusters.faults import disk_faults, firewall
from lab import disks


def sh(command: str, check: bool = True, netns: str | None = None):
    prefix = ["nsenter", f"--net=/run/netns/{netns}", "--"] if netns else []
    return subprocess.run([*prefix, "sh", "-c", command], capture_output=True, text=True,
                          check=check)


@pytest.fixture
def xfs_disk(tmp_path):
    image, mount = tmp_path / "disk.img", tmp_path / "mnt"
    disks.create_image(image, size=300 * 1024**2)
    disk = Disk(node="here", device=str(image), mount=str(mount))
    sh(disk_faults.restore_command(disk))  # not mounted yet: the restore mounts it
    yield disk
    disks.unmount(mount)
    disks.detach_loops(image)
    assert not disks.is_mounted(mount) and disks.loop_devices(image) == []


def test_a_failed_disk_gives_eio_then_is_unmounted_and_comes_back_with_its_data(xfs_disk):
    mount = Path(xfs_disk.mount)
    with open(mount / "kept", "w") as kept:  # acknowledged = on disk, as a daemon fsyncs
        kept.write("acknowledged")
        kept.flush()
        os.fsync(kept.fileno())
    holder = open(mount / "held", "w")  # a daemon's open file keeps the dead fs busy
    try:
        sh(disk_faults.fail_command(xfs_disk))
        with pytest.raises(OSError):
            holder.write("x" * 8192)
            holder.flush()
            os.fsync(holder.fileno())
        assert not disks.is_mounted(mount)
        assert sh(disk_faults.is_healthy_command(xfs_disk)).stdout.strip() == "no"
        # a second failure of a disk that is gone is refused, with the reason
        again = sh(disk_faults.fail_command(xfs_disk), check=False)
        assert again.returncode == 3 and "is not mounted" in again.stderr
    finally:
        try:
            holder.close()
        except OSError:
            pass
    sh(disk_faults.restore_command(xfs_disk))
    assert (mount / "kept").read_text() == "acknowledged"  # log replayed, data back
    assert sh(disk_faults.is_healthy_command(xfs_disk)).stdout.strip() == "yes"
    # restoring a healthy disk changes nothing
    devices = disks.loop_devices(Path(xfs_disk.device))
    sh(disk_faults.restore_command(xfs_disk))
    assert disks.loop_devices(Path(xfs_disk.device)) == devices


def test_a_replaced_disk_is_mounted_empty(xfs_disk):
    (Path(xfs_disk.mount) / "old").write_text("gone with the disk")
    sh(disk_faults.fail_command(xfs_disk))
    sh(disk_faults.restore_command(xfs_disk, replace=True))
    assert disks.is_mounted(xfs_disk.mount)
    assert os.listdir(xfs_disk.mount) == []


@pytest.fixture
def namespace():
    name = f"fltest{uuid.uuid4().hex[:6]}"
    subprocess.run(["ip", "netns", "add", name], check=True)
    sh("ip link set lo up", netns=name)
    yield name
    subprocess.run(["ip", "netns", "del", name], check=True)


def test_isolation_keeps_ssh_open_is_replaced_not_stacked_and_removed_whole(namespace):
    sh(firewall.isolate_command(2222), netns=namespace)
    rules = sh(f"nft list table inet {firewall.TABLE}", netns=namespace).stdout
    assert "tcp dport 2222 accept" in rules and "tcp sport 2222 accept" in rules
    # installing twice replaces the table instead of stacking rules
    sh(firewall.isolate_command(2222), netns=namespace)
    assert sh(f"nft list table inet {firewall.TABLE}", netns=namespace).stdout == rules
    assert sh(firewall.IS_ISOLATED_COMMAND, netns=namespace).stdout.strip() == "yes"
    sh(firewall.REJOIN_COMMAND, netns=namespace)
    sh(firewall.REJOIN_COMMAND, netns=namespace)  # idempotent
    assert sh(firewall.IS_ISOLATED_COMMAND, netns=namespace).stdout.strip() == "no"
    assert sh("nft list ruleset", netns=namespace).stdout.strip() == ""
