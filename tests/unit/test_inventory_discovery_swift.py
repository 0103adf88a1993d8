"""Swift discovery turns ring devices (captured from the lab's rings) into inventory
entries, and marks TODO what the rings do not hold."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from clusters.discovery.reach import Reach
from clusters.discovery.swift import SwiftSource, swift_draft

NOTHING_GIVEN = Reach()  # no option given
RINGS = json.loads((Path(__file__).parent / "data" / "swift_lab_rings.json").read_text())["rings"]
SOURCE = SwiftSource(swift_dir="/etc/swift", swift_conf="/etc/swift/swift.conf")


def rings(change=None):
    copied = copy.deepcopy(RINGS)
    for ring in copied.values():
        for device in ring["devices"]:
            (change or (lambda d: None))(device)
    return copied


def draft(rings_=None, reach=NOTHING_GIVEN, source=SOURCE):
    return swift_draft(rings_ or rings(), source, reach, "prod")


def values(entries):
    return [e.value for e in entries]


def test_nodes_are_the_rings_ips_named_by_meta_in_their_zones():
    assert values(draft().nodes) == [
        {"name": "node1", "address": "10.78.0.11", "zone": "zone1"},
        {"name": "node2", "address": "10.78.0.12", "zone": "zone1"},
        {"name": "node3", "address": "10.78.0.13", "zone": "zone2"},
        {"name": "node4", "address": "10.78.0.14", "zone": "zone3"}]
    assert all(not e.todos for e in draft().nodes)


def test_without_a_host_name_in_meta_nodes_are_numbered_and_marked_todo():
    nodes = draft(rings(lambda d: d.update(meta="rack 4, bay 2"))).nodes
    assert [e.value["name"] for e in nodes] == ["node1", "node2", "node3", "node4"]
    assert all("rename" in e.todos[0] for e in nodes)


def test_several_regions_give_region_qualified_zones():
    def second_region(device):
        if device["ip"] == "10.78.0.14":
            device["region"] = 2
    zones = [e.value["zone"] for e in draft(rings(second_region)).nodes]
    assert zones == ["region1-zone1", "region1-zone1", "region1-zone2", "region2-zone3"]


def test_one_disk_per_device_across_rings_with_its_mount_todo_unless_given():
    disks = draft().disks
    assert values(disks)[0] == {"node": "node1", "device": "TODO", "mount": "/srv/node/d1",
                                "swift_device": "d1"}
    assert len(disks) == 4 and all(len(e.todos) == 2 for e in disks)
    given = draft(reach=Reach(mount="/srv/{node}/{device}",
                              block_device="/dev/disk/by-label/{device}")).disks
    assert values(given)[3] == {"node": "node4", "device": "/dev/disk/by-label/d4",
                                "mount": "/srv/node4/d4", "swift_device": "d4"}
    assert all(not e.todos for e in given)


def test_each_node_runs_the_servers_of_the_rings_that_hold_its_devices():
    ring_data = rings()
    ring_data["object"]["devices"] = [d for d in ring_data["object"]["devices"]
                                      if d["ip"] != "10.78.0.14"]
    services = {s["name"]: s for s in values(draft(ring_data).services)}
    assert {n for n in services if n.endswith(".node4")} == {
        "container-server.node4", "account-server.node4"}
    assert services["object-server.node1"]["node"] == "node1"
    assert services["object-server.node1"]["program"] == "swift-object-server"
    assert len(services) == 11


def test_units_are_the_packages_unless_templates_are_given():
    guessed = {e.value["name"]: e for e in draft().services}
    assert guessed["object-server.node1"].value["unit"] == "swift-object"
    assert guessed["object-server.node1"].todos
    reach = Reach(pid_file="/run/swift/{name}.pid",
                  start="{program} /etc/swift/{kind}/{node}.conf")
    managed = {e.value["name"]: e for e in draft(reach=reach).services}
    assert managed["container-server.node3"].value == {
        "name": "container-server.node3", "kind": "container-server", "node": "node3",
        "pid_file": "/run/swift/container-server.node3.pid",
        "start": "swift-container-server /etc/swift/container-server/node3.conf",
        "program": "swift-container-server"}
    assert not managed["container-server.node3"].todos


def test_client_has_the_ring_dir_ports_replicas_and_credentials_by_reference_only():
    client = draft().client
    assert client.value == {"swift_dir": "/etc/swift", "swift_conf": "/etc/swift/swift.conf",
                            "ports": {"object": 6200, "container": 6201, "account": 6202},
                            "replicas": 3}
    assert "auth_url" in client.todos[0]
    given = draft(source=SwiftSource(swift_dir="/etc/swift", auth_url="http://p:8080/auth/v1.0",
                                     user="test:tester", key_env="SWIFT_KEY")).client
    assert given.value["key_env"] == "SWIFT_KEY" and given.todos == ()


def test_servers_on_several_ports_are_a_todo_note():
    def per_device_port(device):
        device["port"] += device["id"] * 10
    result = draft(rings(per_device_port))
    assert "object" not in result.client.value["ports"]
    assert any("object servers listen on several ports" in n for n in result.notes)


@pytest.mark.parametrize("meta, name", [
    ("store{id}.example.com", "store0.example.com"),  # one host name per node: used
    ("", "node1"),  # none
    ("store", "node1"),  # the same on every node
    ("bay {id}", "node1"),  # not a host name
])
def test_a_node_name_comes_from_meta_only_when_it_names_one_host(meta, name):
    named = draft(rings(lambda d: d.update(meta=meta.format(**d)))).nodes
    assert named[0].value["name"] == name


def test_a_ring_without_replication_addresses_is_discovered_all_the_same():
    def without(device):
        device["replication_ip"] = device["replication_port"] = None

    assert values(draft(rings(without)).nodes) == values(draft().nodes)
