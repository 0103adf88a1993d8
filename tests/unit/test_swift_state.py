"""What the Swift admin client makes of recon, dispersion and the rings (pure logic)."""

from clusters.swift.ring import parse_facts
from clusters.swift.state import Dispersion, NodeRecon, SwiftState, parse_dispersion

REPORT = {"container": {"retries": 0, "pct_found": 100.0, "copies_found": 48,
                        "copies_expected": 48},
          "object": {"retries": 0, "pct_found": 73.4, "copies_found": 141,
                     "copies_expected": 192, "missing_0": 13, "missing_1": 51}}


def _node(name="node1", up=("object", "container", "account"), unmounted=(),
          last=1000.0, seconds=2.0):
    return NodeRecon(node=name, servers_up={t: t in up for t in
                                            ("object", "container", "account")},
                     unmounted=tuple(unmounted), replication_last=last,
                     replication_seconds=seconds)


COMPLETE = Dispersion(object_found=192, object_expected=192, container_found=48,
                      container_expected=48)


def test_dispersion_report_json_gives_copies_and_missing_counts():
    d = parse_dispersion(REPORT)

    assert (d.object_found, d.object_expected) == (141, 192)
    assert round(d.object_pct, 1) == 73.4
    assert d.as_dict()["objects_missing_one"] == 51
    assert d.as_dict()["objects_missing_two"] == 0
    assert d.complete is False


def test_a_dead_server_is_a_fault_and_never_fully_redundant():
    state = SwiftState(nodes=(_node(up=("container", "account")), _node("node2")),
                       handoffs={"node1": 0, "node2": 0}, dispersion=COMPLETE)

    assert state.servers_down == ["object-server.node1"]
    assert state.fault_seen is True
    # Swift does not rebuild a down server's replicas elsewhere: copies are short
    assert state.fully_redundant is False


def test_an_unmounted_device_is_a_fault():
    state = SwiftState(nodes=(_node(unmounted=("d1",)),), handoffs={"node1": 0},
                       dispersion=COMPLETE)

    assert state.unmounted == ["node1/d1"]
    assert state.fault_seen is True


def test_a_dead_proxy_is_a_fault():
    state = SwiftState(nodes=(_node(),), handoffs={"node1": 0}, dispersion=COMPLETE,
                       proxy_up=False)

    assert state.servers_down == ["proxy-server"]
    assert state.as_dict()["down"] == 1


def test_handoffs_left_mean_not_fully_redundant():
    state = SwiftState(nodes=(_node(),), handoffs={"node1": 3}, dispersion=COMPLETE)

    assert state.fault_seen is False
    assert state.fully_redundant is False
    assert state.health == "RECOVERING"


def test_unknown_handoffs_or_dispersion_mean_not_fully_redundant():
    assert SwiftState(nodes=(_node(),), handoffs=None, dispersion=COMPLETE).fully_redundant \
        is False
    unknown = SwiftState(nodes=(_node(),), handoffs={"node1": 0}, dispersion=None)
    assert unknown.fully_redundant is False
    assert unknown.at_risk is None  # not "no risk": the cluster could not tell


def test_all_copies_home_and_every_server_up_is_fully_redundant():
    state = SwiftState(nodes=(_node(), _node("node2")), handoffs={"node1": 0, "node2": 0},
                       dispersion=COMPLETE)

    assert state.fully_redundant is True
    assert state.at_risk is False
    assert state.health == "HEALTHY"


def test_oldest_replication_pass_start_is_the_earliest_of_the_nodes():
    state = SwiftState(nodes=(_node(last=1000.0, seconds=2.0),
                              _node("node2", last=990.0, seconds=5.0)),
                       handoffs={}, dispersion=None)

    assert state.oldest_pass_start == 985.0


def test_a_node_that_never_replicated_has_no_pass_start():
    state = SwiftState(nodes=(_node(), _node("node2", last=None)), handoffs={},
                       dispersion=None)

    assert state.oldest_pass_start is None


def test_ring_facts_say_which_device_is_primary_for_a_partition():
    facts = parse_facts({
        "replicas": {"object": 3, "container": 3, "account": 3},
        "devices": {ring: [{"id": i, "zone": 1 + i // 2, "ip": f"10.0.0.{i}", "port": 6200,
                            "device": f"d{i}"} for i in range(4)]
                    for ring in ("object", "container", "account")},
        "primaries": {ring: [[0, 1, 2], [1, 2, 3]] for ring in ("object", "container",
                                                                 "account")}})

    assert facts.zones() == [1, 2]
    assert facts.device_id("10.0.0.3", "d3") == 3
    assert facts.device_id("10.0.0.3", "d1") is None
    assert facts.is_primary(0, 0) is True
    assert facts.is_primary(1, 0) is False  # partition 1 on d0 is a handoff
    assert facts.is_primary(7, 0) is False  # no such partition
