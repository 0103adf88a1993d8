"""The blast-radius judgement: which faults leave data unavailable or on its last copy
(pure, small placements written out by hand)."""

import pytest

from clusters.safety.blast_radius import (
    CephPlacement,
    CephPool,
    SwiftRingPlacement,
    Verdict,
    ceph_verdict,
    swift_verdict,
)

HINT = " (set allow_unavailable: true to inject anyway)"

# three hosts, one OSD each, failure domain host: every PG on all three
HOSTS = CephPlacement(
    pools=(CephPool(1, "rbd", 3, 2, "host"),),
    pgs=tuple((f"1.{i}", 1, acting) for i, acting in
              enumerate([(0, 1, 2), (1, 2, 0), (2, 0, 1), (0, 2, 1)])),
    osd_domains={0: {"host": "node1"}, 1: {"host": "node2"}, 2: {"host": "node3"}},
    down=frozenset())

# the lab's zones: zone1 = node1 + node2, zone2 = node3, zone3 = node4; one copy per zone
ZONE_OF = {0: ("node1", "zone1"), 1: ("node2", "zone1"), 2: ("node3", "zone2"),
           3: ("node4", "zone3")}
ZONES = CephPlacement(
    pools=(CephPool(2, "faultline", 3, 2, "zone"),),
    pgs=(("2.0", 2, (0, 2, 3)), ("2.1", 2, (3, 1, 2)), ("2.2", 2, (2, 3, 0)),
         ("2.3", 2, (1, 2, 3))),
    osd_domains={osd: {"host": host, "zone": zone, "root": "default"}
                 for osd, (host, zone) in ZONE_OF.items()},
    down=frozenset())

# four hosts where osd.0 and osd.3 never hold the same PG
APART = CephPlacement(
    pools=(CephPool(2, "faultline", 3, 2, "host"),),
    pgs=(("2.0", 2, (0, 1, 2)), ("2.1", 2, (1, 2, 3))),
    osd_domains={i: {"host": f"node{i + 1}"} for i in range(4)},
    down=frozenset())


def with_down(placement: CephPlacement, *osds: int) -> CephPlacement:
    return CephPlacement(placement.pools, placement.pgs, placement.osd_domains,
                         frozenset(osds))


@pytest.mark.parametrize("placement, taking, allowed, first", [
    (HOSTS, {0, 1}, False, "pool rbd: size 3, min_size 2, failure domain host: at most 1 host "
                           "may be down, this fault would leave node1 and node2 down"),
    (HOSTS, {2}, True, "every PG keeps >= 2 of 3 copies"),
    (ZONES, {2}, True, "every PG keeps >= 2 of 3 copies"),
    (ZONES, {0, 1}, True, "every PG keeps >= 2 of 3 copies"),
    (ZONES, {2, 3}, False, "pool faultline: size 3, min_size 2, failure domain zone: at most "
                           "1 zone may be down, this fault would leave zone2 and zone3 down"),
    (ZONES, {0, 2}, False, "pool faultline: size 3, min_size 2, failure domain zone: at most "
                           "1 zone may be down, this fault would leave zone1 (partly: osd.0) "
                           "and zone2 down"),
    (with_down(ZONES, 1), {2}, False, "pool faultline: size 3, min_size 2, failure domain "
                                      "zone: at most 1 zone may be down, this fault would "
                                      "leave zone1 (partly: osd.1) and zone2 down"),
    (with_down(APART, 0), {3}, True, "every PG keeps >= 2 of 3 copies"),
    (with_down(APART, 0), {0}, True, "all of it is already down: this fault takes nothing "
                                     "more down"),
    (APART, {7}, True, "no copy of any data is on osd.7"),
    (APART, set(), True, "this fault takes down nothing that holds data"),
])
def test_ceph_decision_and_its_decisive_reason(placement, taking, allowed, first):
    verdict = ceph_verdict(placement, taking, "the fault")

    assert (verdict.allowed, verdict.reasoning[0]) == (allowed, first)


def test_two_of_three_replicas_hosts_down_is_refused_with_counts_and_an_example_pg():
    verdict = ceph_verdict(HOSTS, {0, 1}, "power off node1, node2")

    assert verdict == Verdict(False, "power off node1, node2", (
        "pool rbd: size 3, min_size 2, failure domain host: at most 1 host may be down, "
        "this fault would leave node1 and node2 down",
        "pool rbd: 4 of 4 PGs would be inactive (fewer than min_size 2 copies), 4 at one "
        "copy or none; e.g. PG 1.0 on osd.0, osd.1, osd.2 would keep only osd.2",
        "already down: nothing"))


def test_one_host_of_three_zones_is_allowed_and_says_why():
    verdict = ceph_verdict(ZONES, {2}, "power off node3")

    assert verdict.reasoning == (
        "every PG keeps >= 2 of 3 copies",
        "pool faultline: size 3, min_size 2, failure domain zone: at most 1 zone may be "
        "down, this fault would leave zone2 down",
        "already down: nothing")


def test_an_osd_already_down_counts_when_another_host_would_share_a_pg_with_it():
    verdict = ceph_verdict(with_down(ZONES, 0), {3}, "kill osd.3")

    assert verdict.allowed is False
    assert verdict.reasoning[1] == (
        "pool faultline: 2 of 4 PGs would be inactive (fewer than min_size 2 copies), 2 at "
        "one copy or none; e.g. PG 2.0 on osd.0, osd.2, osd.3 would keep only osd.2")
    assert verdict.reasoning[-1] == "already down: osd.0"


def test_a_down_osd_already_dropped_from_the_acting_set_still_leaves_a_pg_short():
    degraded = CephPlacement(ZONES.pools, (("2.0", 2, (2, 3)),), ZONES.osd_domains,
                             frozenset({0}))

    verdict = ceph_verdict(degraded, {3}, "kill osd.3")

    assert verdict.allowed is False
    assert "e.g. PG 2.0 on osd.2, osd.3 would keep only osd.2" in verdict.reasoning[1]


def test_a_last_copy_is_refused_even_where_min_size_1_keeps_io_going():
    pairs = CephPlacement((CephPool(3, "pairs", 2, 1, "host"),), (("3.0", 3, (0, 1)),),
                          HOSTS.osd_domains, frozenset())

    verdict = ceph_verdict(pairs, {0}, "kill osd.0")

    assert verdict.reasoning[:2] == (
        "pool pairs: size 2, min_size 1, failure domain host: no host may be down, this "
        "fault would leave node1 down",
        "pool pairs: 0 of 1 PGs would be inactive (fewer than min_size 1 copies), 1 at one "
        "copy or none; e.g. PG 3.0 on osd.0, osd.1 would keep only osd.1")


def test_every_refused_pool_is_named_the_worst_first():
    two = CephPlacement(
        (CephPool(1, "small", 3, 2, "host"), CephPool(2, "big", 3, 2, "host")),
        (("1.0", 1, (0, 1, 2)), ("2.0", 2, (0, 1, 2)), ("2.1", 2, (1, 0, 2))),
        HOSTS.osd_domains, frozenset())

    verdict = ceph_verdict(two, {0, 1}, "two hosts")

    assert verdict.reasoning[0].startswith("pool big: ")
    assert verdict.reasoning[2] == "also pool small (1 of 1 PGs)"


def test_trouble_from_before_the_fault_is_reported_but_does_not_refuse_it():
    placement = CephPlacement(APART.pools, APART.pgs + (("2.2", 2, (4, 5, 6)),),
                              APART.osd_domains, frozenset({4, 5}))

    verdict = ceph_verdict(placement, {3}, "kill osd.3")

    assert verdict.allowed is True
    assert verdict.reasoning[-2:] == (
        "already down: osd.4, osd.5",
        "already before this fault: 1 PG of pool faultline kept fewer than 2 copies")


def test_the_message_is_one_paragraph_with_the_way_out_when_refused():
    refused = Verdict(False, "power off zone zone2 (osd.2)", ("a", "b"))
    allowed = Verdict(True, "kill osd.1", ("c",))

    assert refused.message() == "refused: power off zone zone2 (osd.2): a; b" + HINT
    assert allowed.message() == "allowed: kill osd.1: c"
    assert refused.as_dict() == {"allowed": False, "what": "power off zone zone2 (osd.2)",
                                 "reasoning": ["a", "b"], "message": refused.message()}


# Swift: 3 replicas over 3 zones, zone 1 holding node1 and node2 (the lab's layout)
ZONE = {"node1/d1": 1, "node2/d2": 1, "node3/d3": 2, "node4/d4": 3}
OBJECT = SwiftRingPlacement("object", 3, (
    ("node1/d1", "node3/d3", "node4/d4"), ("node2/d2", "node4/d4", "node3/d3"),
    ("node3/d3", "node1/d1", "node4/d4"), ("node4/d4", "node2/d2", "node3/d3")), ZONE)
CONTAINER = SwiftRingPlacement("container", 3, (
    ("node1/d1", "node3/d3", "node4/d4"), ("node2/d2", "node3/d3", "node4/d4")), ZONE)
RINGS = [OBJECT, CONTAINER]


def keys(*devices: str, rings=("object", "container")) -> set[str]:
    return {f"{ring}:{device}" for ring in rings for device in devices}


@pytest.mark.parametrize("down, taking, allowed, first", [
    (set(), keys("node1/d1", "node2/d2"), True, "every partition keeps >= 2 of 3 copies"),
    (set(), keys("node3/d3"), True, "every partition keeps >= 2 of 3 copies"),
    (set(), keys("node1/d1", "node3/d3"), False,
     "object ring: 3 replicas, write quorum 2, zones 1, 2, 3: at most 1 zone may be down, "
     "this fault would leave zone 1 (partly: object:node1/d1) and zone 2 down"),
    (keys("node4/d4"), keys("node3/d3"), False,
     "object ring: 3 replicas, write quorum 2, zones 1, 2, 3: at most 1 zone may be down, "
     "this fault would leave zone 2 and zone 3 down"),
    ({"object:node4/d4"}, {"container:node3/d3"}, True,
     "every partition keeps >= 2 of 3 copies"),
    (keys("node3/d3"), keys("node3/d3"), True,
     "all of it is already down: this fault takes nothing more down"),
])
def test_swift_decision_and_its_decisive_reason(down, taking, allowed, first):
    verdict = swift_verdict(RINGS, down, taking, "the fault")

    assert (verdict.allowed, verdict.reasoning[0]) == (allowed, first)


def test_one_zone_off_keeps_every_partition_at_quorum():
    verdict = swift_verdict(RINGS, set(), keys("node1/d1", "node2/d2"), "power off zone1")

    assert verdict.reasoning == (
        "every partition keeps >= 2 of 3 copies",
        "object ring: 3 replicas, write quorum 2, zones 1, 2, 3: at most 1 zone may be down, "
        "this fault would leave zone 1 down",
        "already down: nothing")


def test_two_nodes_in_different_zones_are_refused_ring_by_ring():
    verdict = swift_verdict(RINGS, set(), keys("node1/d1", "node3/d3"), "node1 and node3")

    assert verdict.allowed is False
    assert verdict.reasoning[1:] == (
        "object ring: 2 of 4 partitions would keep fewer than the write quorum of 2 copies, "
        "2 at one copy or none; e.g. partition 0 on object:node1/d1, object:node3/d3, "
        "object:node4/d4 would keep only object:node4/d4",
        "also container ring (1 of 2 partitions)",
        "already down: nothing")


def test_an_already_unmounted_device_counts_against_the_next_fault():
    unmounted = keys("node4/d4")  # what recon's unmounted list gives for node4's d4

    verdict = swift_verdict(RINGS, unmounted, keys("node1/d1"), "power off node1")

    assert verdict.allowed is False
    assert verdict.reasoning[-1] == ("already down: container:node4/d4, object:node4/d4")
    assert verdict.message().startswith("refused: power off node1: object ring: ")
    assert verdict.message().endswith(HINT)


def test_a_ring_with_one_replica_refuses_losing_its_device():
    single = SwiftRingPlacement("object", 1, (("node1/d1",),), {"node1/d1": 1})

    verdict = swift_verdict([single], set(), {"object:node1/d1"}, "node1")

    assert verdict.reasoning[:2] == (
        "object ring: 1 replica, write quorum 1, zones 1: no zone may be down, this fault "
        "would leave zone 1 down",
        "object ring: 1 of 1 partitions would keep fewer than the write quorum of 1 copies, "
        "1 at one copy or none; e.g. partition 0 on object:node1/d1 would keep none")
