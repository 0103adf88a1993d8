"""Which power controller a node gets, and what the ledger says is already broken."""

import pytest

from actions.safety import already_faulted
from clusters.access.inventory import parse_inventory
from clusters.faults.power import controller_of, describe
from clusters.safety import fault_ledger

NODES = [
    {"name": "node1", "address": "10.77.0.11", "zone": "zone1", "netns": "flceph1"},
    {"name": "node2", "address": "10.77.0.12", "zone": "zone1"},
    {"name": "node3", "address": "10.77.0.13", "zone": "zone2",
     "power": {"type": "ipmi", "address": "10.0.0.13", "user": "admin",
               "password_file": "/keys/bmc"}},
]
CLUSTERS = parse_inventory({"clusters": {
    "ceph": {"kind": "ceph", "client": {"conf": "/c"}, "nodes": NODES,
             "disks": [{"node": f"node{i}", "device": f"/d{i}", "mount": f"/m{i}", "osd": i}
                       for i in (1, 2, 3)],
             "services": [{"name": f"osd.{i}", "kind": "osd", "node": f"node{i}",
                           "pid_file": f"/p{i}"} for i in (1, 2, 3)]},
    "swift": {"kind": "swift", "nodes": NODES,
              "disks": [{"node": f"node{i}", "device": f"/d{i}", "mount": f"/m{i}",
                         "swift_device": f"d{i}"} for i in (1, 2, 3)]},
}})


@pytest.mark.parametrize(("node", "controller", "description"), [
    ("node1", "netns", "lab link vflceph1"),
    ("node2", "ssh", "nftables over SSH"),
    ("node3", "ipmi", "BMC 10.0.0.13 (ipmitool)"),
])
def test_a_node_is_powered_the_way_its_inventory_says(node, controller, description):
    assert controller_of(CLUSTERS["ceph"].node(node)) == controller
    assert describe(CLUSTERS["ceph"].node(node)) == description


@pytest.fixture
def ledger(tmp_path):
    fault_ledger.set_backend(fault_ledger.FileLedger(tmp_path / "faults.json"))
    yield
    fault_ledger.set_backend(None)


def _record(cluster: str, key: str) -> None:
    fault_ledger.record(cluster, key, key, "actions.power.power_on_node", {})


def test_outstanding_faults_count_as_down_for_ceph(ledger):
    _record("ceph", "zone:zone1")  # node1 and node2
    _record("ceph", "disk:node3:/m3")
    assert already_faulted(CLUSTERS["ceph"]) == ({1, 2, 3}, set())


def test_outstanding_faults_count_as_down_for_swift(ledger):
    _record("swift", "partition:node1")
    _record("swift", "daemon:object-server.node3")
    _record("ceph", "power:node2")  # another cluster's fault changes nothing here
    osds, keys = already_faulted(CLUSTERS["swift"])
    assert osds == set()
    assert keys == {"object:node1/d1", "container:node1/d1", "account:node1/d1",
                    "object:node3/d3"}
