"""Every fault of the catalogue on both real labs: injected, seen by the cluster, restored,
healthy again, no acknowledged object lost, and nothing left in the fault ledger."""

from __future__ import annotations

import pytest
from catalogue import (
    CephObjects,
    SwiftObjects,
    ceph_osds_up,
    swift_fault_seen,
    wait_for,
)

from actions import disk, fill, network, power
from clusters import fault_ledger
from probes import ceph as ceph_probes
from probes import swift as swift_probes

pytestmark = pytest.mark.lab

# (fault, restore, arguments): node2 holds osd.1 in zone1, whose copies can move to node1
CEPH_FAULTS = {
    "fail-disk": (disk.fail_disk, disk.restore_disk, {"node": "node2"}),
    "power-off-node": (power.power_off_node, power.power_on_node, {"node": "node2"}),
    "partition-node": (network.partition_node, network.heal_partition, {"node": "node2"}),
    "power-off-zone": (power.power_off_zone, power.power_on_zone, {"zone": "zone1"}),
}
SWIFT_FAULTS = {
    "fail-disk": (disk.fail_disk, disk.restore_disk, {"node": "node1"}),
    "replace-disk": (disk.fail_disk, disk.restore_disk, {"node": "node2"}),
    "power-off-node": (power.power_off_node, power.power_on_node, {"node": "node1"}),
    "partition-node": (network.partition_node, network.heal_partition, {"node": "node3"}),
    "power-off-zone": (power.power_off_zone, power.power_on_zone, {"zone": "zone1"}),
}


def _config(cluster) -> dict:
    return {"faultline_cluster": cluster.name}


@pytest.mark.parametrize("name", list(CEPH_FAULTS))
def test_ceph_fault_is_seen_restored_and_loses_nothing(name, ceph_cluster, tmp_path):
    fault_ledger.set_backend(fault_ledger.FileLedger(tmp_path / "faults.json"))
    inject, restore, arguments = CEPH_FAULTS[name]
    config = _config(ceph_cluster)
    objects = CephObjects(ceph_cluster)
    try:
        objects.write(20)
        inject(**arguments, configuration=config)
        assert len(fault_ledger.outstanding(ceph_cluster.name)) == 1
        # the cluster itself notices: an OSD down in the osdmap (a silent node: heartbeat grace)
        wait_for(f"Ceph to see {name}", lambda: ceph_osds_up(ceph_cluster) < 4, 60)
        objects.write(20)  # acknowledged while degraded: owed after recovery
        restore(**arguments, configuration=config)
        assert fault_ledger.outstanding(ceph_cluster.name) == []
        ceph_probes.wait_for_health_ok(timeout_s=300, require_all_up=True, configuration=config)
        assert len(objects.acked) == 40
        assert objects.lost() == []
    finally:
        objects.close()
        fault_ledger.set_backend(None)


@pytest.mark.parametrize("name", list(SWIFT_FAULTS))
def test_swift_fault_is_seen_restored_and_loses_nothing(name, swift_cluster, tmp_path):
    fault_ledger.set_backend(fault_ledger.FileLedger(tmp_path / "faults.json"))
    inject, restore, arguments = SWIFT_FAULTS[name]
    config = _config(swift_cluster)
    objects = SwiftObjects(swift_cluster)
    try:
        objects.write(10)
        inject(**arguments, configuration=config)
        assert len(fault_ledger.outstanding(swift_cluster.name)) == 1
        wait_for(f"Swift to see {name}", lambda: swift_fault_seen(swift_cluster), 60)
        objects.write(10)  # the proxy writes to handoffs: every PUT is acknowledged
        extra = {"replace": True} if name == "replace-disk" else {}
        restore(**arguments, **extra, configuration=config)
        assert fault_ledger.outstanding(swift_cluster.name) == []
        swift_probes.wait_for_replication_caught_up(timeout_s=300, configuration=config)
        assert len(objects.acked) == 20
        assert objects.lost() == []
    finally:
        objects.close()
        fault_ledger.set_backend(None)


@pytest.mark.parametrize("lab", ["ceph", "swift"])
def test_fill_reaches_its_target_and_is_removed(lab, request, tmp_path):
    cluster = request.getfixturevalue(f"{lab}_cluster")
    fault_ledger.set_backend(fault_ledger.FileLedger(tmp_path / "faults.json"))
    config = _config(cluster)
    try:
        result = fill.fill_cluster(target=0.4, configuration=config)
        assert 0.4 <= result["after"] < 0.5, result
        assert result["objects"] > 0
        assert [e.key for e in fault_ledger.outstanding(cluster.name)] == ["fill"]
        removed = fill.remove_fill(configuration=config)
        assert removed["deleted"] == result["objects"]
        assert fault_ledger.outstanding(cluster.name) == []
    finally:
        fill.remove_fill(configuration=config)
        fault_ledger.set_backend(None)
