"""The blast-radius guard on the real labs: it reads where the copies really are, allows a
fault that leaves every piece of data its quorum, and refuses one that takes the hosts of
two of three copies, unless told to inject anyway. Nothing is injected here.

The tests do not assume the labs' layout (hosts or zones): they pick the victims from
the placement the clusters report."""

from __future__ import annotations

import re

import pytest

from clusters.ceph.admin import CephAdmin
from clusters.exceptions import BlastRadiusExceeded
from clusters.safety.blast_radius import Verdict
from clusters.safety.guard import ceph_osds_on_nodes, check_ceph, check_swift, swift_keys_on_nodes
from clusters.safety.placement import ceph_placement, swift_down, swift_placement
from clusters.swift.admin import SwiftAdmin

pytestmark = pytest.mark.lab


def _node_of_osd(cluster, osd: int) -> str:
    return next(n for n in cluster.node_names if osd in ceph_osds_on_nodes(cluster, {n}))


@pytest.fixture
def ceph_pool(ceph_cluster):
    """The lab pool, and the acting set of one of its PGs, with nothing down."""
    with CephAdmin.for_cluster(ceph_cluster) as admin:
        placement = ceph_placement(admin)
    assert placement.down == frozenset(), f"the Ceph lab has OSDs down: {placement.down}"
    pool = next(p for p in placement.pools if p.name == ceph_cluster.client["pool"])
    acting = next(a for _, pool_id, a in placement.pgs if pool_id == pool.id)
    assert pool.size == len(acting) == 3, (pool, acting)
    return pool, acting


def test_ceph_taking_one_osd_is_allowed(ceph_cluster, ceph_pool):
    _, acting = ceph_pool

    verdict = check_ceph(ceph_cluster, {acting[0]}, f"kill osd.{acting[0]}")

    assert verdict.allowed, verdict.message()
    assert verdict.reasoning[0].startswith("every PG keeps >= 2 of 3 copies"), verdict.reasoning


def test_ceph_refuses_the_hosts_of_two_of_three_copies(ceph_cluster, ceph_pool):
    pool, acting = ceph_pool
    nodes = {_node_of_osd(ceph_cluster, osd) for osd in acting[:2]}
    taking = ceph_osds_on_nodes(ceph_cluster, nodes)

    with pytest.raises(BlastRadiusExceeded) as refused:
        check_ceph(ceph_cluster, taking, f"power off {', '.join(sorted(nodes))}")

    message = str(refused.value)
    assert message.startswith(f"refused: power off {', '.join(sorted(nodes))}: pool "), message
    assert re.search(rf"pool {re.escape(pool.name)}[: ]", message), message
    assert f"min_size {pool.min_size}" in message, message
    assert message.endswith("(set allow_unavailable: true to inject anyway)")


def test_ceph_allow_unavailable_returns_the_refusal_instead_of_raising(ceph_cluster, ceph_pool):
    _, acting = ceph_pool

    verdict = check_ceph(ceph_cluster, set(acting[:2]), "two OSDs", allow_unavailable=True)

    assert isinstance(verdict, Verdict) and verdict.allowed is False
    assert "would be inactive" in verdict.reasoning[1], verdict.reasoning


@pytest.fixture
def swift_partition(swift_cluster):
    """The nodes holding the copies of one object partition, with nothing down."""
    with SwiftAdmin(swift_cluster) as admin:
        rings = swift_placement(swift_cluster, admin.ring_facts())
        assert swift_down(admin, rings) == set(), "the Swift lab has something down"
    ring = next(r for r in rings if r.ring == "object")
    assert ring.replicas == 3, ring.replicas
    return [key.split("/")[0] for key in ring.assignments[0]]


def test_swift_taking_one_node_is_allowed(swift_cluster, swift_partition):
    node = swift_partition[0]

    verdict = check_swift(swift_cluster, swift_keys_on_nodes(swift_cluster, {node}),
                          f"power off {node}")

    assert verdict.allowed, verdict.message()
    assert verdict.reasoning[0] == "every partition keeps >= 2 of 3 copies", verdict.reasoning


def test_swift_refuses_the_nodes_of_two_of_three_copies(swift_cluster, swift_partition):
    nodes = set(swift_partition[:2])
    taking = swift_keys_on_nodes(swift_cluster, nodes)

    with pytest.raises(BlastRadiusExceeded) as refused:
        check_swift(swift_cluster, taking, f"power off {', '.join(sorted(nodes))}")

    message = str(refused.value)
    assert " ring: 3 replicas, write quorum 2" in message, message
    assert "would keep fewer than the write quorum of 2 copies" in message, message


def test_swift_allow_unavailable_returns_the_refusal_instead_of_raising(swift_cluster,
                                                                      swift_partition):
    taking = swift_keys_on_nodes(swift_cluster, set(swift_partition[:2]), rings=["object"])

    verdict = check_swift(swift_cluster, taking, "two object servers", allow_unavailable=True)

    assert verdict.allowed is False
    assert verdict.reasoning[0].startswith("object ring: 3 replicas, write quorum 2"), \
        verdict.reasoning
