"""Placement facts from the clusters' own JSON, and the guard's inventory helpers (pure).

The Ceph replies are trimmed from a Ceph 16.2.15 lab (4 OSDs, zone1 = node1 + node2)."""

import pytest

from clusters.access.inventory import parse_inventory
from clusters.exceptions import AdminCommandFailed, UnknownCluster
from clusters.safety.blast_radius import SwiftRingPlacement
from clusters.safety.guard import ceph_osds_on_nodes, swift_keys_on_nodes
from clusters.safety.placement import (
    crush_locations,
    down_keys,
    failure_domain,
    parse_ceph_placement,
    parse_pgs_brief,
    rings_from_facts,
)
from clusters.swift.ring import parse_facts
from clusters.swift.state import NodeRecon

POOLS = [{"pool_id": 1, "pool_name": "device_health_metrics", "size": 3, "min_size": 2,
          "crush_rule": 0, "pg_num": 1},
         {"pool_id": 2, "pool_name": "faultline", "size": 3, "min_size": 2, "crush_rule": 1,
          "pg_num": 2}]
RULES = [{"rule_id": 0, "rule_name": "replicated_rule", "steps": [
             {"op": "take", "item": -1, "item_name": "default"},
             {"op": "chooseleaf_firstn", "num": 0, "type": "host"}, {"op": "emit"}]},
         {"rule_id": 1, "rule_name": "faultline-zone", "steps": [
             {"op": "take", "item": -1, "item_name": "default"},
             {"op": "chooseleaf_firstn", "num": 0, "type": "zone"}, {"op": "emit"}]}]
TREE = {"nodes": [
    {"id": -1, "name": "default", "type": "root", "children": [-12, -8, -4]},
    {"id": -4, "name": "zone1", "type": "zone", "children": [-3, -15]},
    {"id": -15, "name": "node1", "type": "host", "children": [0]},
    {"id": 0, "name": "osd.0", "type": "osd", "status": "up"},
    {"id": -3, "name": "node2", "type": "host", "children": [1]},
    {"id": 1, "name": "osd.1", "type": "osd", "status": "up"},
    {"id": -8, "name": "zone2", "type": "zone", "children": [-7]},
    {"id": -7, "name": "node3", "type": "host", "children": [2]},
    {"id": 2, "name": "osd.2", "type": "osd", "status": "down"},
    {"id": -12, "name": "zone3", "type": "zone", "children": [-11]},
    {"id": -11, "name": "node4", "type": "host", "children": [3]},
    {"id": 3, "name": "osd.3", "type": "osd", "status": "up"}], "stray": []}
OSD_DUMP = {"epoch": 13, "osds": [{"osd": 0, "up": 1, "in": 1}, {"osd": 1, "up": 1, "in": 1},
                                  {"osd": 2, "up": 0, "in": 1}, {"osd": 3, "up": 1, "in": 1}]}
PG_DUMP = {"pg_ready": True, "pg_stats": [
    {"pgid": "2.1", "state": "active+undersized+degraded", "up": [3, 0], "acting": [3, 0],
     "up_primary": 3, "acting_primary": 3},
    {"pgid": "2.0", "state": "active+clean", "up": [1, 2, 3], "acting": [1, 2, 3],
     "up_primary": 1, "acting_primary": 1},
    {"pgid": "1.0", "state": "active+clean", "up": [0, 2, 3], "acting": [0, 2, 3],
     "up_primary": 0, "acting_primary": 0}]}


def test_ceph_replies_become_pools_domains_down_osds_and_acting_sets():
    placement = parse_ceph_placement(POOLS, RULES, TREE, OSD_DUMP, PG_DUMP)

    assert [(p.name, p.size, p.min_size, p.failure_domain) for p in placement.pools] == [
        ("device_health_metrics", 3, 2, "host"), ("faultline", 3, 2, "zone")]
    assert placement.osd_domains[1] == {"root": "default", "zone": "zone1", "host": "node2"}
    assert placement.down == frozenset({2})
    assert placement.pgs[0] == ("2.1", 2, (3, 0))


def test_pgs_brief_as_a_bare_list_is_read_too():
    assert parse_pgs_brief(PG_DUMP["pg_stats"]) == parse_pgs_brief(PG_DUMP)


def test_a_mgr_without_pg_statistics_is_an_error_not_an_empty_cluster():
    with pytest.raises(AdminCommandFailed, match="pg_ready false"):
        parse_pgs_brief({"pg_ready": False, "pg_stats": []})


def test_a_pool_with_no_pg_in_the_dump_is_an_error():
    with pytest.raises(AdminCommandFailed, match="no PG of pool device_health_metrics"):
        parse_ceph_placement(POOLS, RULES, TREE, OSD_DUMP,
                             {"pg_ready": True, "pg_stats": PG_DUMP["pg_stats"][:2]})


def test_the_failure_domain_is_the_type_of_the_last_choose_step():
    rule = {"steps": [{"op": "take", "item_name": "default"},
                      {"op": "choose_firstn", "num": 2, "type": "zone"},
                      {"op": "chooseleaf_firstn", "num": 2, "type": "host"}, {"op": "emit"}]}

    assert failure_domain(rule) == "host"
    assert failure_domain({"steps": [{"op": "take"}, {"op": "emit"}]}) is None


def test_stray_osds_outside_crush_are_known_without_location():
    tree = {"nodes": TREE["nodes"], "stray": [{"id": 7, "name": "osd.7"}]}

    assert crush_locations(tree)[7] == {}


FACTS = parse_facts({
    "replicas": {"object": 3.0},
    "devices": {"object": [
        {"id": i, "zone": zone, "ip": f"10.78.0.1{i + 1}", "port": 6200, "device": f"d{i + 1}"}
        for i, zone in enumerate([1, 1, 2, 3])]},
    "primaries": {"object": [[0, 2, 3], [1, 3, 2]]}})


def test_ring_devices_are_keyed_by_the_inventory_node_of_their_ip():
    (ring,) = rings_from_facts(FACTS, {"10.78.0.11": "node1", "10.78.0.13": "node3"})

    assert ring.assignments == (("node1/d1", "node3/d3", "10.78.0.14/d4"),
                                ("10.78.0.12/d2", "10.78.0.14/d4", "node3/d3"))
    assert ring.device_zones["node1/d1"] == 1
    assert ring.replicas == 3


def recon(node, up=("object", "container", "account"), unmounted=()):
    return NodeRecon(node=node, servers_up={t: t in up for t in
                                            ("object", "container", "account")},
                     unmounted=tuple(unmounted))


@pytest.mark.parametrize("seen, down", [
    ([recon("node1"), recon("node2")], set()),
    ([recon("node1", up=("container", "account"))], {"object:node1/d1"}),
    ([recon("node2", unmounted=["d2"])], {"object:node2/d2", "container:node2/d2"}),
    ([recon("node1", up=())], {"object:node1/d1", "container:node1/d1"}),
])
def test_recon_becomes_the_keys_that_are_down(seen, down):
    (obj,) = rings_from_facts(FACTS, {f"10.78.0.1{i}": f"node{i}" for i in range(1, 5)})
    container = SwiftRingPlacement("container", 3, obj.assignments, obj.device_zones)

    assert down_keys([obj, container], seen) == down


INVENTORY = parse_inventory({"clusters": {
    "ceph": {"kind": "ceph", "client": {"conf": "/c"},
             "nodes": [{"name": "node1", "address": "a1", "zone": "zone1"},
                       {"name": "node2", "address": "a2", "zone": "zone1"},
                       {"name": "node3", "address": "a3", "zone": "zone2"}],
             "disks": [{"node": "node1", "device": "/dev/sdb", "mount": "/m0", "osd": 0},
                       {"node": "node3", "device": "/dev/sdb", "mount": "/m2", "osd": 2}],
             "services": [{"name": "osd.1", "kind": "osd", "node": "node2", "pid_file": "/p"},
                          {"name": "mon.a", "kind": "mon", "pid_file": "/p"}]},
    "swift": {"kind": "swift",
              "nodes": [{"name": "node1", "address": "a1"}, {"name": "node2", "address": "a2"}],
              "disks": [{"node": "node1", "device": "/i1", "mount": "/s/d1",
                         "swift_device": "d1"},
                        {"node": "node2", "device": "/i2", "mount": "/s/d2",
                         "swift_device": "d2"}]}}})


def test_osds_on_nodes_come_from_their_disks_and_osd_services():
    assert ceph_osds_on_nodes(INVENTORY["ceph"], {"node1", "node2"}) == {0, 1}


def test_swift_keys_on_nodes_cover_the_rings_asked_for():
    assert swift_keys_on_nodes(INVENTORY["swift"], {"node2"}) == {
        "object:node2/d2", "container:node2/d2", "account:node2/d2"}
    assert swift_keys_on_nodes(INVENTORY["swift"], ["node1"], rings=["object"]) == {
        "object:node1/d1"}


def test_nodes_in_zone_and_the_error_naming_the_zones():
    assert [n.name for n in INVENTORY["ceph"].nodes_in_zone("zone1")] == ["node1", "node2"]
    with pytest.raises(UnknownCluster) as error:
        INVENTORY["ceph"].nodes_in_zone("zone9")
    assert str(error.value) == "cluster 'ceph' has no zone 'zone9' (zones: zone1, zone2)"


def test_an_unknown_node_is_refused_by_name():
    with pytest.raises(UnknownCluster, match="has no node 'node9'"):
        ceph_osds_on_nodes(INVENTORY["ceph"], {"node9"})
