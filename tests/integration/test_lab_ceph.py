"""The real Ceph lab (up once per session, see conftest.py), then cheap checks against it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from clusters.ceph_admin import CephAdmin
from clusters.inventory import Cluster
from lab import disks

pytestmark = pytest.mark.lab


@pytest.fixture
def lab_cluster(ceph_cluster: Cluster) -> Cluster:
    return ceph_cluster


def test_up_reaches_health_ok_with_all_osds(lab_cluster: Cluster) -> None:
    with CephAdmin(lab_cluster.client["conf"]) as admin:
        state = admin.state()
    assert state.health == "HEALTH_OK"
    assert state.num_osds == state.num_up_osds == state.num_in_osds == 4
    assert state.pgs_by_state == {"active+clean": state.num_pgs}


def test_each_osd_is_alone_on_its_crush_host(lab_cluster: Cluster) -> None:
    with CephAdmin(lab_cluster.client["conf"]) as admin:
        tree = admin.osd_tree()
    by_id = {n["id"]: n for n in tree["nodes"]}
    hosts = {n["name"]: [by_id[c]["name"] for c in n.get("children", [])]
             for n in tree["nodes"] if n["type"] == "host"}
    assert hosts == {f"node{i + 1}": [f"osd.{i}"] for i in range(4)}
    assert all(n["status"] == "up" for n in tree["nodes"] if n["type"] == "osd")


def test_inventory_describes_the_lab(lab_cluster: Cluster) -> None:
    assert lab_cluster.kind == "ceph" and lab_cluster.lab
    assert [(n.name, n.address, n.zone, n.netns) for n in lab_cluster.nodes] == [
        ("node1", "10.77.0.11", "zone1", "flceph1"), ("node2", "10.77.0.12", "zone1", "flceph2"),
        ("node3", "10.77.0.13", "zone2", "flceph3"), ("node4", "10.77.0.14", "zone2", "flceph4")]
    assert sorted(s.name for s in lab_cluster.services) == [
        "mgr.x", "mon.a", "osd.0", "osd.1", "osd.2", "osd.3"]
    assert lab_cluster.service("mon.a").node is None
    assert Path(lab_cluster.client["conf"]).is_file()
    assert lab_cluster.client["pool"] == "faultline"


def test_each_osd_data_dir_is_a_loop_mount_of_its_image(lab_cluster: Cluster) -> None:
    devices = {mount_point: device for device, mount_point, _ in disks.mounts()}
    for disk in lab_cluster.disks:
        device = devices.get(disk.mount)
        assert device is not None and device.startswith("/dev/loop"), disk
        assert device in disks.loop_devices(Path(disk.device)), disk


def test_ssh_to_a_node_lands_in_its_namespace(lab_cluster: Cluster) -> None:
    node = lab_cluster.node("node1")
    done = subprocess.run(
        ["ssh", "-i", node.ssh.key_file, "-o", f"UserKnownHostsFile={node.ssh.known_hosts}",
         "-o", "StrictHostKeyChecking=yes", "-o", "BatchMode=yes",
         f"{node.ssh.user}@{node.address}", "ip -4 -o addr show dev eth0"],
        capture_output=True, text=True, timeout=30, check=True)
    assert f" {node.address}/24 " in done.stdout
