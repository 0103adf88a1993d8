"""How both labs' four nodes are spread over failure zones, and why.

    zone1: node1, node2    zone2: node3    zone3: node4

Three zones, so that one whole zone can go with every piece of data keeping two
of its three copies (Ceph: a pool rule with failure domain `zone`, size 3,
min_size 2; Swift: three replicas, which the ring builder spreads one per zone).
Four nodes, so that one node of zone1 can go and its copies be rebuilt on the
other (Ceph re-replicates after down-out; a dead node in zone2 or zone3 cannot be
rebuilt around, as in any cluster with exactly `size` failure domains).

Every zone holds one full copy, so the single nodes of zone2 and zone3 get twice
the disk of zone1's nodes (`capacity_units`): each zone has the same capacity and
all disks fill at the same pace, as a fill experiment needs. More nodes would not
fit two cores (lab-notes: more than 4-5 OSDs is too much CPU).
"""

from __future__ import annotations

ZONES: dict[int, str] = {1: "zone1", 2: "zone1", 3: "zone2", 4: "zone3"}


def zone_name(node_index: int) -> str:
    return ZONES[node_index]


def zone_number(node_index: int) -> int:
    return int(ZONES[node_index].removeprefix("zone"))


def capacity_units(node_index: int) -> int:
    """A node's disk size in units: equal capacity per zone."""
    peers = sum(1 for zone in ZONES.values() if zone == ZONES[node_index])
    return 2 // peers
