"""Where a cluster keeps its copies right now: the facts the blast-radius guard judges.

- Ceph (all JSON from the monitors and the mgr): pools from `osd pool ls detail`, each
  rule's failure domain from `osd crush rule dump` (the type of its last choose step:
  the one that puts each copy in a different bucket), every OSD's CRUSH ancestors from
  `osd tree`, the OSDs down from `osd dump`, and every PG's acting set from the mgr's
  `pg dump pgs_brief` (Ceph 16: {"pg_ready": true, "pg_stats": [...]}; older: a list).
- Swift: each ring's partition -> primary devices table (read in a child process by
  clusters/swift/ring.py), device keys "<node>/<device>" with the node named by the
  inventory node of the device's IP (the IP itself if none has it); and what recon
  says is down, as "<ring>:<node>/<device>" keys (see clusters/safety/blast_radius.py).

The parse_* functions are pure and take the JSON replies, so they are unit-tested.
"""

from __future__ import annotations

import math
from typing import Any

from clusters.access.inventory import Cluster
from clusters.ceph.admin import CephAdmin
from clusters.exceptions import AdminCommandFailed, ClusterError
from clusters.safety.blast_radius import CephPlacement, CephPool, SwiftRingPlacement
from clusters.swift.admin import SwiftAdmin
from clusters.swift.ring import RingFacts, read_ring_facts
from clusters.swift.state import NodeRecon


def ceph_placement(admin: CephAdmin) -> CephPlacement:
    """Pools, CRUSH locations, down OSDs and PG acting sets of a connected cluster."""
    return parse_ceph_placement(
        pools=admin.command("osd pool ls", detail="detail"),
        rules=admin.command("osd crush rule dump"),
        tree=admin.command("osd tree"),
        osd_dump=admin.command("osd dump"),
        pg_dump=admin.mgr_command("pg dump", dumpcontents=["pgs_brief"]))


def parse_ceph_placement(pools: list[dict], rules: list[dict], tree: dict, osd_dump: dict,
                         pg_dump: Any) -> CephPlacement:
    domains = {r["rule_id"]: failure_domain(r) for r in rules}
    parsed = tuple(CephPool(id=int(p["pool_id"]), name=p["pool_name"], size=int(p["size"]),
                            min_size=int(p["min_size"]),
                            failure_domain=domains.get(p.get("crush_rule")))
                   for p in pools)
    pgs = parse_pgs_brief(pg_dump)
    seen = {pool_id for _, pool_id, _ in pgs}
    missing = [p["pool_name"] for p in pools if p.get("pg_num", 1) and p["pool_id"] not in seen]
    if missing:
        raise AdminCommandFailed(f"the mgr reported no PG of pool {', '.join(missing)} yet: "
                                 "cannot tell where its copies are (try again shortly)")
    down = frozenset(int(o["osd"]) for o in osd_dump.get("osds", []) if not o.get("up"))
    return CephPlacement(pools=parsed, pgs=pgs, osd_domains=crush_locations(tree),
                         down=down)


def failure_domain(rule: dict) -> str | None:
    """The CRUSH type the rule spreads copies over: that of its last choose step."""
    types = [s.get("type") for s in rule.get("steps", [])
             if str(s.get("op", "")).startswith("choose")]
    return types[-1] if types and types[-1] else None


def crush_locations(tree: dict) -> dict[int, dict[str, str]]:
    """OSD id -> {bucket type: bucket name} of each of its ancestors in `osd tree`."""
    nodes = {n["id"]: n for n in tree.get("nodes", [])}
    children = {c for n in nodes.values() for c in n.get("children", [])}
    located: dict[int, dict[str, str]] = {}

    def walk(node_id: int, above: dict[str, str]) -> None:
        node = nodes.get(node_id)
        if node is None:
            return
        if node_id >= 0:
            located[node_id] = dict(above)
            return
        here = {**above, node["type"]: node["name"]}
        for child in node.get("children", []):
            walk(child, here)

    for root in sorted(i for i in nodes if i < 0 and i not in children):
        walk(root, {})
    for stray in tree.get("stray", []):  # OSDs outside the CRUSH map
        located.setdefault(int(stray["id"]), {})
    return located


def parse_pgs_brief(pg_dump: Any) -> tuple[tuple[str, int, tuple[int, ...]], ...]:
    """(pgid, pool id, acting OSDs) of every PG in a `pg dump pgs_brief` reply."""
    if isinstance(pg_dump, dict):
        if pg_dump.get("pg_ready") is False:
            raise AdminCommandFailed("the mgr has no PG statistics yet (pg_ready false)")
        stats = pg_dump.get("pg_stats", (pg_dump.get("pg_map") or {}).get("pg_stats"))
    else:
        stats = pg_dump
    if not isinstance(stats, list):
        raise AdminCommandFailed(f"unexpected `pg dump pgs_brief` reply: {str(pg_dump)[:200]}")
    return tuple((s["pgid"], int(s["pgid"].split(".", 1)[0]), tuple(int(o) for o in s["acting"]))
                 for s in stats)


def swift_placement(cluster: Cluster, facts: RingFacts | None = None) -> list[SwiftRingPlacement]:
    """Every ring's partition -> primaries table, devices keyed "<node>/<device>"."""
    if facts is None:
        swift_dir = cluster.client.get("swift_dir")
        if not swift_dir:
            raise ClusterError(f"{cluster.name}: client.swift_dir (where its rings are) "
                               "is not in the inventory")
        facts = read_ring_facts(swift_dir)
    return rings_from_facts(facts, {n.address: n.name for n in cluster.nodes})


def rings_from_facts(facts: RingFacts, node_of_ip: dict[str, str]) -> list[SwiftRingPlacement]:
    rings = []
    for ring, devices in facts.devices.items():
        key = {d.id: f"{node_of_ip.get(d.ip, d.ip)}/{d.device}" for d in devices}
        rings.append(SwiftRingPlacement(
            ring=ring, replicas=math.ceil(facts.replicas[ring]),
            assignments=tuple(tuple(key[i] for i in part if i in key)
                              for part in facts.primaries[ring]),
            device_zones={key[d.id]: d.zone for d in devices}))
    return rings


def swift_down(admin: SwiftAdmin, rings: list[SwiftRingPlacement] | None = None) -> set[str]:
    """Keys of the ring devices whose server does not answer or whose disk is unmounted."""
    if rings is None:
        rings = swift_placement(admin.cluster, admin.ring_facts())
    return down_keys(rings, admin.recon())


def down_keys(rings: list[SwiftRingPlacement], recon: list[NodeRecon]) -> set[str]:
    """The "<ring>:<node>/<device>" keys recon shows down: that ring's server on the node
    does not answer its healthcheck, or the device is unmounted (then in every ring)."""
    by_node = {r.node: r for r in recon}
    down = set()
    for ring in rings:
        for device_key in ring.device_zones:
            node, _, device = device_key.partition("/")
            seen = by_node.get(node)
            if seen is not None and (not seen.servers_up.get(ring.ring, True)
                                     or device in seen.unmounted):
                down.add(f"{ring.ring}:{device_key}")
    return down
