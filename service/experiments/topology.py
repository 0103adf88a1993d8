"""What the cluster's topology lets its system do about an experiment's faults, in one line
each, said before anything is injected and stored with the run.

From the fault scopes (service.experiments.fault_scope: what each fault action takes down)
and the inventory's zones only, no call to the cluster. A warning is given only where the
topology decides the outcome; nothing when nothing applies:

- Ceph, a fault that takes down every OSD of a failure domain (the node's zone; its host
  when the inventory has no zones) while fewer domains are left than copies (3 by default,
  one per domain): Ceph cannot re-replicate that domain's copies anywhere, so time to full
  redundancy while the fault persists can only time out.
- Ceph, a fault that takes down some OSDs of a domain on a cluster the experiment first
  fills (a `fill_cluster` action's `target`, the raw usage): the domain's surviving OSDs
  must take the lost ones' copies, that is `target x OSDs in the domain / OSDs left` of
  their capacity (OSDs of a domain of equal size, all filled at the same pace, as in the
  lab). At Ceph's nearfull ratio (0.85) HEALTH_WARN stays; at its backfillfull ratio (0.90)
  backfill stops (backfill_toofull) and the PGs stay degraded. Either way time to full
  redundancy while the fault persists can only time out. Below nearfull: nothing to say.
  Without a fill in the experiment the cluster's usage is not known here: nothing is said.
- Swift, a fault that takes down devices: Swift keeps them in its rings. A device that does
  not answer (a killed server, a node powered off or cut off) is transient to it: nothing is
  rebuilt, new writes go to handoffs. A failed (unmounted) disk answers 507 and replicators
  copy its partitions to handoffs, but its primary copies stay missing from the dispersion
  report. Either way time to full redundancy while the fault persists is normally n/a.

Ratios are Ceph's defaults (mon_osd_nearfull_ratio, mon_osd_backfillfull_ratio,
mon_osd_full_ratio), which the lab keeps.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from clusters.access.inventory import Cluster

from .fault_scope import FaultScope, fault_scopes

REPLICAS = 3  # Ceph's osd_pool_default_size and the lab's Swift rings: one copy per zone
NEARFULL, BACKFILLFULL, FULL = 0.85, 0.90, 0.95
TIMES_OUT = "time to full redundancy while the fault persists can only time out"
SWIFT_NA = ("time to full redundancy while the fault persists is normally n/a "
            "(compare the after-restore figure)")


def topology_notes(experiment: dict[str, Any], cluster: Cluster,
                   replicas: int = REPLICAS) -> list[str]:
    """The warnings for a run of this experiment on this cluster, one line each, in the
    order of the method's faults; an empty list when the topology changes nothing."""
    notes: list[str] = []
    fill: float | None = None  # the raw usage a fill action before the fault reached
    for scope in fault_scopes(experiment, cluster):
        if scope.action.endswith(".fill_cluster"):
            fill = _fill_target(scope.arguments)
            continue
        if scope.problem or not scope.takes_down:
            continue
        if cluster.kind == "ceph":
            notes += _ceph_notes(scope, cluster, fill, replicas)
        else:
            notes += _swift_notes(scope)
    return list(dict.fromkeys(notes))


def _fill_target(arguments: dict[str, Any]) -> float | None:
    """The raw usage the fill aims at; None when it writes a count of objects instead."""
    if arguments.get("objects") is not None:
        return None
    target = arguments.get("target")
    target = 0.5 if target is None else target  # actions.fill.fill_cluster's default
    if isinstance(target, bool) or not isinstance(target, int | float):
        return None
    return float(target)


def _ceph_domains(cluster: Cluster) -> dict[str, list[int]]:
    """The OSDs of each failure domain: a node's zone, or the node itself when it has none."""
    node_of = {d.osd: d.node for d in cluster.disks if d.osd is not None}
    for service in cluster.services_of_kind("osd"):
        number = service.name.removeprefix("osd.")
        if service.node and number.isdigit():
            node_of.setdefault(int(number), service.node)
    zone_of = {n.name: n.zone or f"host {n.name}" for n in cluster.nodes}
    domains: dict[str, list[int]] = defaultdict(list)
    for osd, node in sorted(node_of.items()):
        domains[zone_of.get(node, f"host {node}")].append(osd)
    return dict(domains)


def _ceph_notes(scope: FaultScope, cluster: Cluster, fill: float | None,
                replicas: int) -> list[str]:
    down = {int(k.removeprefix("osd.")) for k in scope.takes_down if k.startswith("osd.")}
    domains = _ceph_domains(cluster)
    hit = [d for d, osds in domains.items() if down & set(osds)]
    whole = [d for d in hit if set(domains[d]) <= down]
    left = len(domains) - len(whole)
    notes = []
    for domain in hit:
        osds = domains[domain]
        if domain in whole:
            if left < replicas:
                notes.append(_lost_domain(domain, osds, left, replicas))
        elif fill is not None:
            note = _fill_pressure(domain, osds, sorted(down & set(osds)), fill)
            if note:
                notes.append(note)
    return notes


def _lost_domain(domain: str, osds: list[int], left: int, replicas: int) -> str:
    unit = "zones" if not domain.startswith("host ") else "hosts"
    room = (f"{left} {unit if left != 1 else unit[:-1]} {'are' if left != 1 else 'is'} left "
            f"for {replicas} copies, one per {unit[:-1]}")
    probe = 'as can a "healed while dead" probe'
    if len(osds) == 1:
        return (f"osd.{osds[0]} is the only OSD in {domain}: {room}, so Ceph cannot "
                f"re-replicate its PGs while it is down, and {TIMES_OUT}, {probe}.")
    return (f"{_names(osds)}, every OSD in {domain}, are down: {room}, so Ceph cannot "
            f"re-replicate {domain}'s copies while they are down, and {TIMES_OUT}, {probe}.")


def _fill_pressure(domain: str, osds: list[int], down: list[int], fill: float) -> str | None:
    survivors = [o for o in osds if o not in down]
    share = fill * len(osds) / len(survivors)
    if share < NEARFULL:
        return None
    one = len(survivors) == 1
    them = "it" if one else "them"
    head = (f"With {_names(down)} down at {fill:.0%} fill, {_names(survivors)}, {domain}'s "
            f"other OSD{'' if one else 's'}, must hold {domain}'s whole copy: about "
            f"{share:.0%} of {'its' if one else 'their'} capacity")
    if share >= BACKFILLFULL:
        return (f"{head}, past Ceph's backfillfull ratio {BACKFILLFULL:.2f} (full "
                f"{FULL:.2f}), so backfill to {them} stops (backfill_toofull), the PGs stay "
                f"degraded, and {TIMES_OUT}.")
    return (f"{head}, past Ceph's nearfull ratio {NEARFULL:.2f}, so HEALTH_WARN "
            f"(OSD_NEARFULL) stays once the copies are rebuilt, and {TIMES_OUT}.")


def _names(osds: list[int]) -> str:
    return _listed([f"osd.{o}" for o in osds])


def _listed(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _swift_notes(scope: FaultScope) -> list[str]:
    rings: dict[str, set[str]] = defaultdict(set)  # "node1/d1" -> {"object", ...}
    for key in scope.takes_down:
        ring, _, device = key.partition(":")
        rings[device].add(ring)
    devices = sorted(rings)
    if len({frozenset(r) for r in rings.values()}) == 1:  # a node or a zone: the same rings
        what = f"{_listed(devices)} ({_rings(rings[devices[0]])})"
    else:
        what = _listed([f"{d} ({_rings(rings[d])})" for d in devices])
    one = len(devices) == 1
    if scope.action.endswith(".fail_disk"):
        return [f"{what} {'stays' if one else 'stay'} in Swift's rings while failed: "
                f"{'it answers' if one else 'they answer'} 507, so replicators copy "
                f"{'its' if one else 'their'} partitions to handoff devices, but the "
                f"dispersion report still misses {'its' if one else 'their'} primary "
                f"copies, and {SWIFT_NA}."]
    return [f"Swift does not rebuild the partitions of {what} elsewhere while "
            f"{'it is' if one else 'they are'} down (a device that does not answer is "
            f"transient to it: only new writes go to handoffs), so {SWIFT_NA}."]


def _rings(rings: set[str]) -> str:
    if rings >= {"object", "container", "account"}:
        return "every ring"
    return " and ".join(sorted(rings)) + (" ring" if len(rings) == 1 else " rings")
