"""Scaling Ceph by one OSD (clusters/ceph/new_osd.py, actions/new_osd.py): the checks of
its arguments, the inventory's templates, the new OSD's place and the commands that make,
start and remove it, on plain values (the lab test runs them)."""

from __future__ import annotations

import json

import pytest
import yaml
from chaoslib.exceptions import ActivityFailed

from actions import ceph_scale as actions
from clusters.access.inventory import load_cluster
from clusters.ceph import new_osd
from clusters.exceptions import InvalidScale

TEMPLATES = {"image": "/lab/disks/osd{id}.img", "mount": "/lab/osd/ceph-{id}",
             "pid_file": "/lab/run/ceph-osd.{id}.pid", "log": "/lab/log/osd.{id}.stdout"}


@pytest.fixture
def inventory(tmp_path):
    path = tmp_path / "inventory.yaml"
    path.write_text(yaml.safe_dump({"clusters": {"lab": {
        "kind": "ceph", "client": {"conf": "/lab/ceph.conf"},
        "nodes": [{"name": "node1", "address": "10.77.0.11", "zone": "zone1"},
                  {"name": "node2", "address": "10.77.0.12", "zone": "zone1"}],
        "disks": [{"node": "node1", "device": "/lab/disks/osd0.img",
                   "mount": "/lab/osd/ceph-0", "osd": 0}],
        "services": [{"name": "osd.0", "kind": "osd", "node": "node1",
                      "pid_file": "/lab/run/ceph-osd.0.pid", "start": "ceph-osd -i 0"}],
        "scale": {"ceph_osd": TEMPLATES}}}}))
    return path


def test_sizes_and_nodes_that_make_no_sense_are_refused(inventory):
    cluster = load_cluster(inventory, "lab")
    for bad in (0, 0.5, -2, 2000, True, "2", None, float("nan")):
        with pytest.raises(InvalidScale, match="size_gib must be a number of GiB from 1"):
            new_osd.check_size(bad)
    assert new_osd.check_size(2) == 2.0
    with pytest.raises(InvalidScale, match="has no node 'node9' \\(nodes: node1, node2\\)"):
        new_osd.check_node(cluster, "node9")
    # a node name that is not plain ('node 2') is refused by the inventory already
    # before a run: one message naming the activity's problem
    with pytest.raises(ActivityFailed, match="timeout_s must be a number of seconds"):
        actions.check_arguments("add_osd", {"node": "node1", "timeout_s": 0}, cluster)
    with pytest.raises(ActivityFailed, match="osd_id must be a whole number"):
        actions.check_arguments("remove_osd", {"osd_id": "osd.4"}, cluster)
    actions.check_arguments("add_osd", {"node": "node1", "size_gib": 2}, cluster)


def test_the_templates_come_from_the_inventory_or_the_cluster_cannot_grow(inventory, tmp_path):
    assert new_osd.template(inventory, "lab") == TEMPLATES
    raw = yaml.safe_load(inventory.read_text())
    raw["clusters"]["lab"]["scale"]["ceph_osd"]["mount"] = "/lab/osd/new"  # no {id}
    other = tmp_path / "other.yaml"
    other.write_text(yaml.safe_dump(raw))
    with pytest.raises(InvalidScale, match="needs scale.ceph_osd with image, mount, pid_file"):
        new_osd.template(other, "lab")


def test_the_new_osd_is_placed_at_its_node_and_started_with_its_place(inventory):
    cluster = load_cluster(inventory, "lab")
    osd = new_osd.new_osd(cluster, TEMPLATES, 4, "u-u-i-d", "node1", 2)
    assert (osd.image, osd.mount, osd.pid_file) == (
        "/lab/disks/osd4.img", "/lab/osd/ceph-4", "/lab/run/ceph-osd.4.pid")
    assert osd.crush_location == "root=default,zone=zone1,host=node1"
    start, mkfs = new_osd.start_command(osd), new_osd.mkfs_command(osd)
    for option in ("-i 4", "--osd-data /lab/osd/ceph-4", "--public-addr 10.77.0.11",
                   "--crush-location root=default,zone=zone1,host=node1",
                   f"--bluestore-block-size {2 * 1024**3}", ">>/lab/log/osd.4.stdout"):
        assert option in start and option in mkfs, option
    assert "--mkfs --osd-uuid u-u-i-d" in mkfs and "--mkfs" not in start
    # the ledger replays remove_osd with it: plain JSON
    assert json.loads(json.dumps(osd.as_dict()))["image"] == "/lab/disks/osd4.img"
    assert "exists already" in new_osd.check_command(osd)
    assert "mkfs.xfs" not in new_osd.check_command(osd)  # the check changes nothing


def test_the_inventory_learns_the_osd_and_forgets_it_again(inventory):
    cluster = load_cluster(inventory, "lab")
    osd = new_osd.new_osd(cluster, TEMPLATES, 4, "u", "node1", 2)
    new_osd.record_in_inventory(inventory, "lab", osd)
    grown = load_cluster(inventory, "lab")
    assert grown.service("osd.4").start == new_osd.start_command(osd)
    assert [d.osd for d in grown.disks] == [0, 4]
    assert new_osd.template(inventory, "lab") == TEMPLATES  # kept by the rewrite
    new_osd.forget_in_inventory(inventory, "lab", 4)
    shrunk = load_cluster(inventory, "lab")
    assert [s.name for s in shrunk.services] == ["osd.0"] and [d.osd for d in shrunk.disks] == [0]


def test_the_lab_finds_the_osds_scale_added_by_their_pid_files_and_disks(tmp_path):
    from lab.ceph_layout import lab_at

    lab = lab_at(tmp_path)
    lab.run_dir.mkdir(parents=True)
    (tmp_path / "disks").mkdir()
    for name in ("ceph-osd.0.pid", "ceph-osd.4.pid", "ceph-mon.a.pid", "ceph-osd.x.pid"):
        (lab.run_dir / name).write_text("1\n")
    for name in ("osd3.img", "osd6.img", "osd6.img.partial"):
        (tmp_path / "disks" / name).write_text("")

    assert lab.added_osds() == [4, 6]
