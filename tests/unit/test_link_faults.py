"""A lossy link (clusters/faults/link_faults.py): its arguments checked, and the nftables rules and
netem command it puts on each node, as text."""

from __future__ import annotations

import pytest

from clusters.access.inventory import parse_inventory
from clusters.exceptions import InvalidLinkFault, UnknownCluster
from clusters.faults.link_faults import (
    LinkFault,
    describe_mechanism,
    link_fault,
    mechanism_for,
    netem_command,
    parse_counters,
    receivers,
    ruleset,
    tbf_command,
)

ZONES = {"node1": "zone1", "node2": "zone1", "node3": "zone2", "node4": "zone3"}
CLUSTER = parse_inventory({"clusters": {"lab": {
    "kind": "ceph", "client": {"conf": "/etc/ceph/ceph.conf"},
    "nodes": [{"name": n, "address": f"10.77.0.{10 + i}", "zone": z}
              for i, (n, z) in enumerate(ZONES.items(), 1)]}}})["lab"]


@pytest.mark.parametrize(("arguments", "message"), [
    ({"node": "node2", "loss_percent": 150},
     "loss_percent must be from 1 to 30, not 150"),
    ({"node": "node2", "loss_percent": 0}, "loss_percent must be from 1 to 30, not 0"),
    ({"node": "node2", "loss_percent": 31}, "loss_percent must be from 1 to 30, not 31"),
    ({"node": "node2", "loss_percent": 2.5}, "loss_percent must be a whole number, not 2.5"),
    ({"node": "node2", "loss_percent": "10"}, "loss_percent must be a whole number, not '10'"),
    ({"node": "node2", "cap_mbit": 0}, "cap_mbit must be from 0.1 to 10000 Mbit/s, not 0"),
    ({"node": "node2", "cap_mbit": 1e9},
     "cap_mbit must be from 0.1 to 10000 Mbit/s, not 1000000000.0"),
    ({"node": "node2", "cap_mbit": -5}, "cap_mbit must be from 0.1 to 10000 Mbit/s, not -5"),
    ({"node": "node2", "delay_ms": 9000}, "delay_ms must be from 0 to 1000, not 9000"),
    ({"node": "node2"}, "a lossy link needs loss_percent (1 to 30), cap_mbit or delay_ms"),
    ({"loss_percent": 10},
     'name either a node or two zones (zones: ["zone1", "zone2"]), not neither'),
    ({"node": "node1", "zones": ["zone1", "zone2"], "loss_percent": 10},
     'name either a node or two zones (zones: ["zone1", "zone2"]), not both'),
    ({"zones": ["zone1", "zone1"], "loss_percent": 10},
     "zones must be two different zones, not ['zone1', 'zone1']"),
    ({"zones": "zone1", "loss_percent": 10}, "zones must be two different zones, not 'zone1'"),
])
def test_a_lossy_link_with_bad_arguments_is_refused_with_one_message(arguments, message):
    with pytest.raises(InvalidLinkFault) as refused:
        link_fault(CLUSTER, **arguments)

    assert str(refused.value) == message


@pytest.mark.parametrize(("arguments", "message"), [
    ({"node": "node9", "loss_percent": 10},
     "cluster 'lab' has no node 'node9' (nodes: node1, node2, node3, node4)"),
    ({"zones": ["zone1", "zone7"], "loss_percent": 10},
     "cluster 'lab' has no zone 'zone7' (zones: zone1, zone2, zone3)"),
])
def test_a_lossy_link_on_an_unknown_node_or_zone_names_the_known_ones(arguments, message):
    with pytest.raises(UnknownCluster) as refused:
        link_fault(CLUSTER, **arguments)

    assert str(refused.value) == message


def test_a_lossy_node_loses_what_arrives_at_it_and_what_it_sends_to_the_others():
    fault = link_fault(CLUSTER, node="node2", loss_percent=20)

    assert fault.key == "link:node2" and fault.says() == "20% packet loss on node2"
    assert receivers(CLUSTER, fault) == {"node2": None, "node1": ["10.77.0.12"],
                                         "node3": ["10.77.0.12"], "node4": ["10.77.0.12"]}


def test_between_two_zones_each_side_loses_only_what_comes_from_the_other():
    fault = link_fault(CLUSTER, zones=["zone1", "zone2"], loss_percent=5, cap_mbit=8)

    assert fault.key == "link:zone1~zone2"
    assert fault.says() == "5% packet loss and a 8 Mbit/s cap between zone1 and zone2"
    assert receivers(CLUSTER, fault) == {"node1": ["10.77.0.13"], "node2": ["10.77.0.13"],
                                         "node3": ["10.77.0.11", "10.77.0.12"]}


def test_the_ruleset_drops_at_random_and_polices_in_prerouting_sparing_ssh():
    text = ruleset(LinkFault(loss_percent=20, cap_mbit=8, zones=("zone1", "zone2")),
                   ["10.77.0.11", "10.77.0.12"], 22)

    assert text == """\
table inet faultline_link
delete table inet faultline_link
table inet faultline_link {
  counter seen { }
  counter lost { }
  counter capped { }
  chain prerouting {
    type filter hook prerouting priority -300; policy accept;
    iif "lo" accept
    tcp dport 22 accept
    ip saddr { 10.77.0.11, 10.77.0.12 } counter name "seen"
    ip saddr { 10.77.0.11, 10.77.0.12 } numgen random mod 100 < 20 counter name "lost" drop
    ip saddr { 10.77.0.11, 10.77.0.12 } limit rate over 1000000 bytes/second burst 100000 \
bytes counter name "capped" drop
  }
}
"""


def test_on_the_lossy_node_itself_every_source_is_matched_and_no_cap_means_no_limit():
    text = ruleset(LinkFault(loss_percent=3, node="node2"), None, 2222)

    assert '    counter name "seen"\n' in text
    assert '    numgen random mod 100 < 3 counter name "lost" drop\n' in text
    assert "tcp dport 2222 accept" in text and "limit" not in text


def test_netem_gets_loss_delay_and_rate_on_the_interface_holding_the_address():
    command = netem_command(LinkFault(loss_percent=10, cap_mbit=2.5, delay_ms=40,
                                      node="node2"), "10.77.0.12")

    assert command.startswith("dev=$(ip -o -4 addr show | awk -v a=10.77.0.12/ "
                              "'index($4, a) == 1 {print $2; exit}'); ")
    assert command.endswith('tc qdisc replace dev "$dev" root handle fa17: netem '
                            "delay 40ms loss 10% rate 2500kbit")


def test_the_record_names_the_mechanism_and_that_latency_needs_netem():
    fault = LinkFault(loss_percent=20, node="node2")

    assert describe_mechanism(fault, "nftables") == (
        "nftables random drop 20% (prerouting, table inet faultline_link) on packets arriving "
        "at node2 and from it at the other nodes; no added latency (that needs netem)")
    assert describe_mechanism(fault, "netem").startswith("tc netem on node2's interface")
    assert describe_mechanism(LinkFault(cap_mbit=2, node="node2"), "nftables") == (
        "nftables limit 2 Mbit/s on what arrives at node2, tbf 2 Mbit/s on what it sends "
        "(prerouting, table inet faultline_link) on node2; no added latency (that needs netem)")


def test_a_node_cap_is_a_tbf_on_its_interface_and_peers_do_not_police_it():
    fault = LinkFault(loss_percent=5, cap_mbit=2, node="node2")

    assert tbf_command(fault, "10.77.0.12").endswith(
        'tc qdisc replace dev "$dev" root handle fa17: tbf rate 2000kbit burst 25000 '
        "latency 100ms")
    assert "limit rate" not in ruleset(fault, ["10.77.0.12"], 22, police=False)
    assert "limit rate over 250000 bytes/second" in ruleset(fault, None, 22)


@pytest.mark.parametrize(("fault", "wanted", "message"), [
    (LinkFault(delay_ms=50, zones=("zone1", "zone2")), "auto",
     "netem (and so added latency) is for one node's link, not between zones"),
    (LinkFault(loss_percent=5, zones=("zone1", "zone2")), "netem",
     "netem (and so added latency) is for one node's link, not between zones"),
    (LinkFault(loss_percent=5, node="node1"), "tc", "mechanism must be one of auto, nftables, "
                                                   "netem, not 'tc'"),
    (LinkFault(delay_ms=50, node="node1"), "nftables",
     "added latency (delay_ms) needs netem: nftables cannot delay a packet"),
])
def test_a_mechanism_that_cannot_be_had_is_refused_before_any_node_is_asked(fault, wanted,
                                                                          message):
    with pytest.raises(InvalidLinkFault) as refused:
        mechanism_for(CLUSTER, fault, wanted)

    assert str(refused.value) == message


def test_the_counters_are_read_from_nft_list_counters():
    listed = """table inet faultline_link {
\tcounter seen {
\t\tpackets 425 bytes 61234
\t}
\tcounter lost {
\t\tpackets 81 bytes 9000
\t}
\tcounter capped {
\t\tpackets 0 bytes 0
\t}
}"""

    assert parse_counters(listed) == {"seen": 425, "lost": 81, "capped": 0}
    assert parse_counters("") == {"seen": 0, "lost": 0, "capped": 0}


def test_an_address_reaches_the_node_s_shell_only_quoted():
    command = tbf_command(LinkFault(cap_mbit=2, node="node2"), "10.0.0.1'; reboot; '")

    assert "awk -v a='10.0.0.1'\"'\"'; reboot; '\"'\"'/' " in command
    assert "echo 'no interface holds 10.0.0.1'\"'\"'; reboot; '\"'\"'' >&2" in command
