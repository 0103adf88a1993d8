"""The inventory: validated as a whole, every problem named in one InventoryError."""

import copy

import pytest
import yaml

from clusters.access.inventory import (
    Disk,
    Node,
    Service,
    SshAccess,
    load_cluster,
    load_inventory,
    parse_inventory,
    write_cluster,
)
from clusters.exceptions import InventoryError, UnknownCluster

LAB_CEPH = {
    "kind": "ceph",
    "ssh": {"user": "root", "port": 2222, "key_file": "/keys/id_ed25519"},
    "nodes": [
        {"name": "node1", "address": "10.77.0.11", "zone": "zone1"},
        {"name": "node2", "address": "10.77.0.12", "ssh": {"port": 22}},
    ],
    "disks": [{"node": "node1", "device": "/dev/loop0", "mount": "/var/lib/ceph/osd/ceph-0",
               "osd": 0}],
    "services": [
        {"name": "osd.0", "kind": "osd", "node": "node1", "pid_file": "/run/ceph/osd.0.pid",
         "start": "ceph-osd -i 0"},
        {"name": "mon.a", "kind": "mon", "unit": "ceph-mon@a"},
    ],
    "client": {"conf": "/etc/ceph/ceph.conf", "pool": "faultline"},
    "lab": True,
}


def inventory(**changes):
    spec = copy.deepcopy(LAB_CEPH)
    for key, value in changes.items():
        if value is None:
            spec.pop(key)
        else:
            spec[key] = value
    return {"clusters": {"lab-ceph": spec}}


def test_a_valid_inventory_is_parsed_into_clusters():
    cluster = parse_inventory(inventory())["lab-ceph"]

    assert cluster.kind == "ceph"
    assert cluster.lab is True
    assert cluster.node_names == ["node1", "node2"]
    assert cluster.node("node1") == Node(
        name="node1", address="10.77.0.11", zone="zone1",
        ssh=SshAccess(user="root", port=2222, key_file="/keys/id_ed25519"))
    assert cluster.disks == (Disk(node="node1", device="/dev/loop0",
                                  mount="/var/lib/ceph/osd/ceph-0", osd=0),)
    assert cluster.service("mon.a") == Service(name="mon.a", kind="mon", node=None,
                                               unit="ceph-mon@a")
    assert cluster.client == {"conf": "/etc/ceph/ceph.conf", "pool": "faultline"}


def test_a_node_ssh_setting_overrides_the_cluster_default():
    cluster = parse_inventory(inventory())["lab-ceph"]

    assert cluster.node("node2").ssh == SshAccess(user="root", port=22,
                                                  key_file="/keys/id_ed25519")


def test_services_of_kind_lists_only_that_kind():
    cluster = parse_inventory(inventory())["lab-ceph"]

    assert [s.name for s in cluster.services_of_kind("osd")] == ["osd.0"]


def test_an_unknown_node_is_named_with_the_known_ones():
    cluster = parse_inventory(inventory())["lab-ceph"]

    with pytest.raises(UnknownCluster) as excinfo:
        cluster.node("node9")

    assert str(excinfo.value) == \
        "cluster 'lab-ceph' has no node 'node9' (nodes: node1, node2)"


def test_an_unknown_service_is_named_with_the_known_ones():
    cluster = parse_inventory(inventory())["lab-ceph"]

    with pytest.raises(UnknownCluster) as excinfo:
        cluster.service("osd.7")

    assert str(excinfo.value) == "cluster 'lab-ceph' has no service 'osd.7' (known: osd.0, mon.a)"


NODE1 = [{"name": "node1", "address": "10.77.0.11"}]


@pytest.mark.parametrize(("raw", "message"), [
    (None, "inventory: expected a mapping with a 'clusters' mapping at the top"),
    ({"clusters": ["lab-ceph"]},
     "inventory: expected a mapping with a 'clusters' mapping at the top"),
    ({"clusters": {"lab-ceph": "ceph"}},
     "inventory is malformed: cluster 'lab-ceph': expected a mapping"),
    (inventory(kind="rbd"),
     "inventory is malformed: cluster 'lab-ceph': kind must be one of ceph, swift, not 'rbd'"),
    (inventory(nodes=[], disks=None, services=None),
     "inventory is malformed: cluster 'lab-ceph': needs at least one node"),
    (inventory(nodes={"node1": "10.77.0.11"}, disks=None, services=None),
     "inventory is malformed: cluster 'lab-ceph': nodes must be a list; "
     "cluster 'lab-ceph': needs at least one node"),
    (inventory(nodes=NODE1 + [{"name": "node2"}], disks=None, services=None),
     "inventory is malformed: cluster 'lab-ceph': a node lacks address"),
    (inventory(nodes=NODE1 + [{"name": "node 2;x", "address": "10.77.0.12"}], disks=None,
               services=None),
     "inventory is malformed: cluster 'lab-ceph': node name 'node 2;x' must be letters, "
     "digits, '.', '_' or '-' (it goes into unit names, paths and shell commands)"),
    (inventory(nodes=NODE1 + NODE1, disks=None, services=None),
     "inventory is malformed: cluster 'lab-ceph': node names must be unique"),
    (inventory(disks=[{"node": "node9", "device": "/dev/sdb", "mount": "/m"}]),
     "inventory is malformed: cluster 'lab-ceph': disk /dev/sdb is on unknown node 'node9'"),
    (inventory(services=[{"name": "osd.0", "kind": "osd", "node": "node1"}]),
     "inventory is malformed: cluster 'lab-ceph': service osd.0 needs a pid_file or a unit"),
    (inventory(services=[{"name": "osd.0", "kind": "osd", "node": "node9", "unit": "u"}]),
     "inventory is malformed: cluster 'lab-ceph': service osd.0 is on unknown node 'node9'"),
    (inventory(client={"pool": "faultline"}),
     "inventory is malformed: cluster 'lab-ceph': client.conf (path of ceph.conf) is required"),
    (inventory(client="/etc/ceph/ceph.conf"),
     "inventory is malformed: cluster 'lab-ceph': client must be a mapping; "
     "cluster 'lab-ceph': client.conf (path of ceph.conf) is required"),
    (inventory(ssh={"usr": "root"}),
     "inventory is malformed: cluster 'lab-ceph' node node1 ssh: SshAccess.__init__() got an "
     "unexpected keyword argument 'usr'; cluster 'lab-ceph' node node2 ssh: "
     "SshAccess.__init__() got an unexpected keyword argument 'usr'"),
    (inventory(ssh="root"),
     "inventory is malformed: cluster 'lab-ceph': ssh must be a mapping"),
    (inventory(nodes=[{"name": "node1", "address": "10.77.0.11", "ssh": {"port": "22"}}],
               disks=None, services=None),
     "inventory is malformed: cluster 'lab-ceph': node node1 ssh port must be 1..65535, "
     "not '22'"),
    (inventory(nodes=NODE1, disks=None, services=[
        {"name": "osd.0", "kind": "osd", "node": "node1", "unit": "a"},
        {"name": "osd.0", "kind": "osd", "node": "node1", "unit": "b"}]),
     "inventory is malformed: cluster 'lab-ceph': service osd.0 is listed twice"),
    (inventory(nodes=[{"name": "node1", "address": "10.77.0.11", "ssh": "root"}]),
     "inventory is malformed: cluster 'lab-ceph': node node1 ssh must be a mapping"),
    (inventory(nodes=[{"name": "node1", "address": "10.77.0.11", "power": "ipmi"}],
               disks=None, services=None),
     "inventory is malformed: cluster 'lab-ceph': node node1 power.type must be one of ipmi, "
     "ssh, netns, not 'ipmi'"),
    (inventory(nodes=[{"name": "node1", "address": "10.77.0.11",
                       "power": {"type": "ipmi", "address": "10.0.0.9"}}],
               disks=None, services=None),
     "inventory is malformed: cluster 'lab-ceph': node node1 power (ipmi) lacks user, "
     "password_file"),
    (inventory(nodes=[{"name": "node1", "address": "10.77.0.11", "power": {"type": "netns"}}],
               disks=None, services=None),
     "inventory is malformed: cluster 'lab-ceph': node node1 power netns needs the node's "
     "netns"),
], ids=lambda v: v if isinstance(v, str) else None)
def test_a_malformed_inventory_is_rejected_with_exact_message(raw, message):
    with pytest.raises(InventoryError) as excinfo:
        parse_inventory(raw)

    assert str(excinfo.value) == message


def test_a_malformed_inventory_names_every_problem_of_every_cluster():
    raw = {"clusters": {
        "a": {"kind": "cepf", "nodes": [{"name": "n1", "address": "x"}],
              "disks": [{"node": "n2", "device": "/dev/sdb", "mount": "/m"}],
              "services": [{"name": "osd.0", "kind": "osd"}]},
        "b": {"kind": "ceph", "nodes": []},
    }}

    with pytest.raises(InventoryError) as excinfo:
        parse_inventory(raw, source="inv.yaml")

    assert str(excinfo.value) == (
        "inv.yaml is malformed: "
        "cluster 'a': kind must be one of ceph, swift, not 'cepf'; "
        "cluster 'a': disk /dev/sdb is on unknown node 'n2'; "
        "cluster 'a': service osd.0 needs a pid_file or a unit; "
        "cluster 'b': needs at least one node; "
        "cluster 'b': client.conf (path of ceph.conf) is required")


def test_a_disk_missing_a_field_is_reported_with_the_field():
    with pytest.raises(InventoryError, match=r"cluster 'lab-ceph' disk: .*'mount'"):
        parse_inventory(inventory(disks=[{"node": "node1", "device": "/dev/sdb"}]))


def write_yaml(path, raw):
    path.write_text(yaml.safe_dump(raw))
    return path


def test_load_cluster_returns_the_named_cluster(tmp_path):
    path = write_yaml(tmp_path / "inventory.yaml", inventory())

    assert load_cluster(path, "lab-ceph").name == "lab-ceph"


def test_load_cluster_with_an_unknown_name_names_the_known_clusters(tmp_path):
    raw = inventory()
    raw["clusters"]["prod-ceph"] = copy.deepcopy(LAB_CEPH)
    path = write_yaml(tmp_path / "inventory.yaml", raw)

    with pytest.raises(UnknownCluster) as excinfo:
        load_cluster(path, "lab-swift")

    assert str(excinfo.value) == \
        f"unknown cluster 'lab-swift' in {path} (known: lab-ceph, prod-ceph)"


def test_load_cluster_from_an_empty_inventory_says_none_are_known(tmp_path):
    path = write_yaml(tmp_path / "inventory.yaml", {"clusters": {}})

    with pytest.raises(UnknownCluster, match=r"\(known: none\)$"):
        load_cluster(path, "lab-ceph")


def test_a_missing_inventory_file_says_how_to_get_one(tmp_path):
    path = tmp_path / "nope.yaml"

    with pytest.raises(InventoryError) as excinfo:
        load_inventory(path)

    assert str(excinfo.value) == (f"inventory {path} does not exist "
                                  "(run `faultline lab up` or set FAULTLINE_INVENTORY)")


def test_an_inventory_that_is_not_yaml_is_an_inventory_error(tmp_path):
    path = tmp_path / "inventory.yaml"
    path.write_text("clusters: [unclosed\n")

    with pytest.raises(InventoryError, match=r"is not valid YAML"):
        load_inventory(path)


def test_write_cluster_keeps_the_other_clusters(tmp_path):
    path = write_yaml(tmp_path / "inventory.yaml", inventory())
    other = copy.deepcopy(LAB_CEPH) | {"lab": False}

    write_cluster(path, "prod-ceph", other)

    clusters = load_inventory(path)
    assert sorted(clusters) == ["lab-ceph", "prod-ceph"]
    assert clusters["lab-ceph"] == parse_inventory(inventory())["lab-ceph"]
    assert clusters["prod-ceph"].lab is False


def test_write_cluster_replaces_a_cluster_of_the_same_name(tmp_path):
    path = write_yaml(tmp_path / "inventory.yaml", inventory())

    write_cluster(path, "lab-ceph", copy.deepcopy(LAB_CEPH) | {"client": {"conf": "/other"}})

    assert load_cluster(path, "lab-ceph").client == {"conf": "/other"}


def test_write_cluster_creates_the_file_and_its_directory(tmp_path):
    path = tmp_path / "state" / "inventory.yaml"

    write_cluster(path, "lab-ceph", copy.deepcopy(LAB_CEPH))

    assert load_cluster(path, "lab-ceph").kind == "ceph"


def test_write_cluster_refuses_a_malformed_cluster_and_leaves_the_file_alone(tmp_path):
    path = write_yaml(tmp_path / "inventory.yaml", inventory())
    before = path.read_text()

    with pytest.raises(InventoryError, match=r"kind must be one of ceph, swift, not 'rbd'"):
        write_cluster(path, "bad", copy.deepcopy(LAB_CEPH) | {"kind": "rbd"})

    assert path.read_text() == before


def test_zones_and_what_is_on_a_node():
    cluster = parse_inventory({"clusters": {"lab-ceph": LAB_CEPH}})["lab-ceph"]
    assert cluster.zones == ["zone1"]
    assert [n.name for n in cluster.nodes_in_zone("zone1")] == ["node1"]
    assert [s.name for s in cluster.services_on("node1")] == ["osd.0"]
    assert [d.osd for d in cluster.disks_on("node1")] == [0]
    with pytest.raises(UnknownCluster) as excinfo:
        cluster.nodes_in_zone("zone7")
    assert str(excinfo.value) == "cluster 'lab-ceph' has no zone 'zone7' (zones: zone1)"
