"""Scaling Swift (clusters/swift/new_device.py): the device asked for, checked against the
inventory; where it goes; and the shell that pushes a ring and lists a device's partitions,
run for real on local directories."""

from __future__ import annotations

import subprocess
import sys

import pytest

from clusters.access.inventory import parse_inventory
from clusters.exceptions import InvalidScale
from clusters.swift.new_device import (
    PUSH_CHUNK,
    delete_command,
    device_name,
    digest,
    parse_partitions,
    partitions_command,
    push_commands,
    scale_device,
    zone_number,
)
from clusters.swift.ring_edit import SCALE_META, edit_rings
from clusters.swift.scale_steps import check_ours

HOME = "/var/lib/faultline/lab/swift"


def _cluster(device: str = f"{HOME}/disks/d1.img", kind: str = "swift"):
    return parse_inventory({"clusters": {"lab": {
        "kind": kind, "client": {"auth_url": "http://127.0.0.1:8280/auth/v1.0",
                                 "conf": "/etc/ceph/ceph.conf"},
        "nodes": [{"name": "node1", "address": "10.78.0.11", "zone": "zone1"},
                  {"name": "node2", "address": "10.78.0.12", "zone": "zone1"}],
        "disks": [{"node": "node1", "device": device, "mount": f"{HOME}/srv/node1/d1",
                   "swift_device": "d1"}]}}})["lab"]


def _sh(command: str) -> str:
    return subprocess.run(["sh", "-c", command], check=True, capture_output=True,
                          text=True).stdout


def test_scale_device_goes_beside_the_nodes_device_and_its_image():
    dev = scale_device(_cluster(), "node1", size_mib=512, weight=50, zone=1)
    assert (dev.device, dev.mount, dev.image) == (
        "scale-node1", f"{HOME}/srv/node1/scale-node1", f"{HOME}/disks/scale-node1.img")
    assert (dev.size_mib, dev.weight, dev.rings, dev.address) == (
        512, 50.0, ("object",), "10.78.0.11")
    assert dev.says() == (f"device scale-node1 (512 MiB image {HOME}/disks/scale-node1.img, "
                          f"weight 50) added to the object ring(s) on node1, mounted at "
                          f"{HOME}/srv/node1/scale-node1")


@pytest.mark.parametrize(("arguments", "message"), [
    ({"node": "node9"}, "cluster 'lab' has no node 'node9' (nodes: node1, node2)"),
    ({"node": "node2"}, "node node2 of lab holds no Swift device in the inventory: its "
                        "devices directory is unknown"),
    ({"size_mib": 10}, "size_mib must be a whole number of MiB from 64 to 1048576, not 10"),
    ({"size_mib": 2.5}, "size_mib must be a whole number of MiB from 64 to 1048576, not 2.5"),
    ({"size_mib": True}, "size_mib must be a whole number of MiB from 64 to 1048576, "
                         "not True"),
    ({"weight": 0}, "weight must be a number above 0 and at most 100000, not 0"),
    ({"weight": -1}, "weight must be a number above 0 and at most 100000, not -1"),
    ({"weight": float("inf")}, "weight must be a number above 0 and at most 100000, "
                               "not inf"),
    ({"weight": "100"}, "weight must be a number above 0 and at most 100000, not '100'"),
    ({"rings": []}, "rings must be a list of distinct ring names from object, container, "
                    "account, not []"),
    ({"rings": ["object", "object"]}, "rings must be a list of distinct ring names from "
                                      "object, container, account, not ['object', 'object']"),
    ({"device": "d1"}, "device must be a name starting with 'scale-' (a device scale adds; "
                       "letters, digits, - and _), not 'd1'"),
    ({"device": "scale-../x"}, "device must be a name starting with 'scale-' (a device scale "
                               "adds; letters, digits, - and _), not 'scale-../x'"),
    ({"image_dir": "relative"}, "image_dir must be an absolute path, not 'relative'"),
])
def test_a_scale_device_that_makes_no_sense_is_one_message(arguments, message):
    with pytest.raises(InvalidScale) as refused:
        scale_device(_cluster(), **{"node": "node1", **arguments})
    assert str(refused.value) == message


def test_a_block_device_node_needs_an_image_dir():
    with pytest.raises(InvalidScale, match="is the block device /dev/vdb: give image_dir"):
        scale_device(_cluster("/dev/vdb"), "node1")
    assert scale_device(_cluster("/dev/vdb"), "node1", image_dir="/srv/images").image == \
        "/srv/images/scale-node1.img"


def test_scale_refuses_a_ceph_cluster():
    with pytest.raises(InvalidScale, match="lab is a ceph cluster, not Swift"):
        scale_device(_cluster(kind="ceph"), "node1")


def test_the_new_device_joins_its_nodes_ring_zone():
    assert zone_number(_cluster(), "node1", {"10.78.0.11": 1, "10.78.0.13": 2}) == 1
    with pytest.raises(InvalidScale, match="node node2 .10.78.0.12. holds no device of the "
                                           "object ring"):
        zone_number(_cluster(), "node2", {"10.78.0.11": 1})


def test_device_name_defaults_to_scale_and_the_node():
    assert device_name("Node1") == "scale-node1"
    assert device_name("node1", "scale-fast_2") == "scale-fast_2"


@pytest.mark.parametrize("size", [0, 363, PUSH_CHUNK, 3 * PUSH_CHUNK + 7])
def test_a_pushed_ring_lands_whole_and_reports_its_digest(tmp_path, size):
    (tmp_path / "object.ring.gz").write_bytes(b"old ring")
    content = bytes(range(256)) * (size // 256) + bytes(size % 256)
    for command in push_commands(str(tmp_path), "object", content):
        landed = _sh(command).strip()
    assert landed == digest(content)
    assert (tmp_path / "object.ring.gz").read_bytes() == content
    assert sorted(p.name for p in tmp_path.iterdir()) == ["object.ring.gz"]


def test_a_devices_partitions_are_listed_per_ring(tmp_path):
    for path in ("objects/12", "objects/200", "objects/tmp", "containers/3"):
        (tmp_path / path).mkdir(parents=True)
    (tmp_path / "objects" / "hashes.pkl").write_text("")
    out = _sh(partitions_command(str(tmp_path), ("object", "container", "account")))
    assert parse_partitions(out) == {"object": 2, "container": 1}
    assert parse_partitions("") == {}


def test_deleting_a_device_that_is_not_there_changes_nothing_and_says_so(tmp_path):
    image = tmp_path / "scale-node1.img"
    out = _sh(delete_command(str(tmp_path / "mnt"), str(image)))
    assert out.split() == []
    image.write_bytes(b"x")
    (tmp_path / "mnt").mkdir()
    assert _sh(delete_command(str(tmp_path / "mnt"), str(image))).split() == ["image"]
    assert not image.exists() and not (tmp_path / "mnt").exists()


def test_the_report_says_what_scale_out_and_in_did():
    from service.results.report import swift_scale_lines

    assert swift_scale_lines("fault_injected", {
        "node": "node1", "device": "scale-node1", "weight": 100.0,
        "partitions": {"object": 109}, "pushed_to": {"object": ["node2", "node1"]}}) == [
        "scale out: scale-node1 on node1 (weight 100.0) given 109 object partition(s); rings "
        "pushed to node1, node2"]
    assert swift_scale_lines("activity", {"moved_s": 23.6, "state": "HEALTHY"}) == [
        "data moved where the new rings put it 23.6 s after the ring push (no handoff "
        "partition left, dispersion 100%)"]
    assert swift_scale_lines("activity", {
        "device": "scale-node1", "drained_s": 29.6, "removed_from": ["object"],
        "deleted": ["mounted", "image"]}) == [
        "scale in: scale-node1 drained in 29.6 s after its weight-0 push, removed from the "
        "object ring(s); on the node: its mount and its image removed"]
    assert swift_scale_lines("activity", {
        "device": "scale-node1", "drained_s": 1.0, "removed_from": ["object"],
        "deleted": []})[0].endswith("on the node: nothing removed")
    assert swift_scale_lines("activity", {"drained_s": None, "removed_from": []}) == []


def _builders(directory) -> None:
    """Object and container builders of four devices in three zones, as the lab's."""
    script = (
        "import sys\nfrom swift.common.ring import RingBuilder\n"
        "for ring in ('object', 'container'):\n"
        "    b = RingBuilder(6, 3, 1)\n"
        "    for i, zone in enumerate((1, 1, 2, 3), 1):\n"
        "        b.add_dev({'region': 1, 'zone': zone, 'ip': f'10.78.0.1{i}', 'port': 6200,\n"
        "                   'device': f'd{i}', 'weight': 100})\n"
        "    b.rebalance()\n"
        "    b.save(f'{sys.argv[1]}/{ring}.builder')\n")
    subprocess.run([sys.executable, "-c", script, str(directory)], check=True)


def test_a_ring_edit_adds_drains_and_removes_the_device_in_the_named_rings_only(tmp_path):
    _builders(tmp_path)
    change = {"rings": ["object"], "ip": "10.78.0.11", "device": "scale-node1", "zone": 1,
              "ports": {"object": 6200}}

    added = edit_rings(str(tmp_path), {**change, "op": "add", "weight": 100.0})
    # a ring built just now: moved at once (min_part_hours passed over, by design)
    assert added["object"]["present"] and added["object"]["parts"] > 0
    assert added["object"]["meta"] == SCALE_META
    assert (tmp_path / "object.ring.gz.staged").exists()
    assert not (tmp_path / "container.ring.gz.staged").exists()
    shown = edit_rings(str(tmp_path), {**change, "op": "show", "rings": ["container"]})
    assert not shown["container"]["present"]

    drained = edit_rings(str(tmp_path), {**change, "op": "weight", "weight": 0.0})
    assert drained["object"]["parts"] == 0 and drained["object"]["present"]
    removed = edit_rings(str(tmp_path), {**change, "op": "remove"})
    assert not removed["object"]["present"]


def test_a_ring_edit_without_its_builder_is_one_message(tmp_path):
    with pytest.raises(InvalidScale) as refused:
        edit_rings(str(tmp_path), {"op": "show", "rings": ["object", "account"],
                                   "ip": "10.78.0.11", "device": "scale-node1"})
    assert str(refused.value) == (f"no object.builder, account.builder in {tmp_path} (scale "
                                  "needs the ring builders)")


def test_scale_removes_no_device_it_did_not_add():
    dev = scale_device(_cluster(), "node1", zone=1)
    check_ours(dev, {"object": {"present": True, "meta": SCALE_META},
                     "container": {"present": False, "meta": None}})
    with pytest.raises(InvalidScale, match="scale-node1 on node1 is in the object ring but "
                                           "was not added by scale: refusing to remove it"):
        check_ours(dev, {"object": {"present": True, "meta": ""}})


def test_a_ring_whose_builder_is_ahead_of_the_admins_copy_is_staged_again(tmp_path):
    _builders(tmp_path)
    stage = {"op": "stage", "rings": ["object", "container"]}
    assert edit_rings(str(tmp_path), stage) == {"object": True, "container": True}
    for ring in ("object", "container"):  # as a finished push leaves them
        (tmp_path / f"{ring}.ring.gz.staged").rename(tmp_path / f"{ring}.ring.gz")
    assert edit_rings(str(tmp_path), stage) == {"object": False, "container": False}
    assert not list(tmp_path.glob("*.staged*"))

    edit_rings(str(tmp_path), {"op": "add", "rings": ["object"], "ip": "10.78.0.11",
                               "device": "scale-node1", "zone": 1, "weight": 100.0,
                               "ports": {"object": 6200}})
    # killed after the builder was saved, before its ring was pushed: staged again
    (tmp_path / "object.ring.gz.staged").unlink()
    assert edit_rings(str(tmp_path), stage) == {"object": True, "container": False}
    assert (tmp_path / "object.ring.gz.staged").exists()
