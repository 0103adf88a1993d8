"""Which stored calibration applies to a relative rate (service.runs.calibration_reuse): the
same cluster, API, cost of an operation, release and topology, and nothing else."""

from __future__ import annotations

from dataclasses import replace

import pytest

from clusters.access.inventory import Cluster, Disk, Node, Service
from service.runs.calibration_reuse import topology_of, why_not_reused

CLUSTER = Cluster(
    name="lab-ceph", kind="ceph", release="pacific",
    nodes=tuple(Node(f"node{i}", f"10.0.0.{i}", zone=f"z{i}") for i in (1, 2, 3)),
    disks=tuple(Disk(f"node{i}", "/dev/sdb", f"/var/lib/ceph/osd/ceph-{i}", osd=i)
                for i in (1, 2, 3)),
    services=tuple(Service(f"osd.{i}", "osd", f"node{i}") for i in (1, 2, 3))
    + (Service("mon.a", "mon", "node1"),))
SHAPE = {"object_size": 4096, "object_size_max": None, "mix": {"read": 80, "write": 20}}


def made(**changes) -> dict:
    return {"cluster": "lab-ceph", "api": "rados", "workload": dict(SHAPE),
            "release": "pacific", "topology": topology_of(CLUSTER), **changes}


def test_the_topology_counts_nodes_zones_devices_osds_and_services_of_each_kind():
    assert topology_of(CLUSTER) == {"nodes": 3, "zones": 3, "devices": 3, "osds": 3,
                                    "services": {"mon": 1, "osd": 3}}


def test_a_calibration_of_the_same_cluster_release_topology_and_cost_is_reused():
    assert why_not_reused(made(), CLUSTER, "rados", SHAPE) is None
    # the shape's other keys (containers, objects) do not change what an operation costs
    assert why_not_reused(made(workload={**SHAPE, "containers": 4}), CLUSTER, "rados",
                          SHAPE) is None


@pytest.mark.parametrize("calibration, cluster, why", [
    (made(release="reef"), CLUSTER,
     "made on release reef, the cluster now runs pacific"),
    (made(), replace(CLUSTER, release="reef"),
     "made on release pacific, the cluster now runs reef"),
    (made(release=None), CLUSTER,
     "made on release not named, the cluster now runs pacific"),
    (made(), replace(CLUSTER, disks=CLUSTER.disks + (Disk("node1", "/dev/sdc", "/m", osd=4),)),
     "made on another topology (devices 3 -> 4, osds 3 -> 4)"),
    (made(), replace(CLUSTER, nodes=CLUSTER.nodes[:2]),
     "made on another topology (nodes 3 -> 2, zones 3 -> 2)"),
    (made(topology=None, release=None), CLUSTER,
     "made before calibrations recorded the release and topology"),
    (made(topology=None, release=None), replace(CLUSTER, release=None),
     "made before calibrations recorded the release and topology"),
    (made(workload={**SHAPE, "object_size": 65536}), CLUSTER, "another object size"),
    (made(api="swift"), CLUSTER, "made on lab-ceph (swift), not lab-ceph (rados)"),
])
def test_a_calibration_of_another_release_topology_or_cost_is_not_reused(calibration, cluster,
                                                                         why):
    assert why_not_reused(calibration, cluster, "rados", SHAPE) == why
