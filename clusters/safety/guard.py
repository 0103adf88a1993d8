"""The blast-radius guard: refuse a fault that would leave data unavailable or unsafe.

Fault actions call check_ceph / check_swift with what the fault takes down, BEFORE
injecting it. The check reads where the copies are and what is down right now
(clusters/safety/placement.py), judges (clusters/safety/blast_radius.py), and raises
BlastRadiusExceeded with the reasoning if the fault is refused. An experiment that says
`allow_unavailable: true` gets the refused verdict back instead, to log that it injects
anyway. The helpers below turn inventory things (nodes, a zone) into what they take down:
OSD ids for Ceph, "<ring>:<node>/<device>" keys for Swift.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from clusters.access.inventory import Cluster
from clusters.ceph.admin import CephAdmin
from clusters.exceptions import BlastRadiusExceeded, ClusterError, UnknownCluster
from clusters.safety.blast_radius import Verdict, ceph_verdict, swift_verdict
from clusters.safety.placement import ceph_placement, swift_down, swift_placement
from clusters.swift.admin import SwiftAdmin
from clusters.swift.ring import RING_TYPES


def check_ceph(cluster: Cluster, taking_osds: set[int], what: str,
               allow_unavailable: bool = False, also_down: set[int] = frozenset()) -> Verdict:
    """Judge taking down the OSDs `taking_osds` (on top of those already down, and of
    `also_down`: faults injected that the cluster may not have noticed yet)."""
    _require_kind(cluster, "ceph")
    with CephAdmin.for_cluster(cluster) as admin:
        placement = ceph_placement(admin)
    placement = dataclasses.replace(
        placement, down=placement.down | frozenset(set(also_down) - set(taking_osds)))
    known = set(placement.osd_domains) | {o for _, _, acting in placement.pgs for o in acting}
    unknown = sorted(set(taking_osds) - known)
    if unknown:
        raise UnknownCluster(
            f"cluster {cluster.name!r} has no {', '.join(f'osd.{o}' for o in unknown)} "
            f"(OSDs: {', '.join(f'osd.{o}' for o in sorted(placement.osd_domains))})")
    return _enforce(ceph_verdict(placement, set(taking_osds), what), allow_unavailable)


def check_swift(cluster: Cluster, taking: set[str], what: str,
                allow_unavailable: bool = False, also_down: set[str] = frozenset()) -> Verdict:
    """Judge taking down the "<ring>:<node>/<device>" keys `taking` (on top of what recon
    shows down now)."""
    _require_kind(cluster, "swift")
    with SwiftAdmin(cluster) as admin:
        rings = swift_placement(cluster, admin.ring_facts())
        down = swift_down(admin, rings) | (set(also_down) - set(taking))
    known = {f"{r.ring}:{d}" for r in rings for d in r.device_zones}
    unknown = sorted(set(taking) - known)
    if unknown:
        raise UnknownCluster(f"cluster {cluster.name!r} has no ring device "
                             f"{', '.join(unknown)} (devices: {', '.join(sorted(known))})")
    return _enforce(swift_verdict(rings, down, set(taking), what), allow_unavailable)


def _enforce(verdict: Verdict, allow_unavailable: bool) -> Verdict:
    if not verdict.allowed and not allow_unavailable:
        raise BlastRadiusExceeded(verdict.message())
    return verdict


def _require_kind(cluster: Cluster, kind: str) -> None:
    if cluster.kind != kind:
        raise ClusterError(f"{cluster.name} is a {cluster.kind} cluster, not {kind}")


def _check_nodes(cluster: Cluster, nodes: Iterable[str]) -> set[str]:
    nodes = set(nodes)
    for name in sorted(nodes):
        cluster.node(name)  # raises UnknownCluster naming the known nodes
    return nodes


def ceph_osds_on_nodes(cluster: Cluster, nodes: Iterable[str]) -> set[int]:
    """The OSDs the inventory places on these nodes (by their disks and OSD services)."""
    nodes = _check_nodes(cluster, nodes)
    osds = {d.osd for d in cluster.disks if d.node in nodes and d.osd is not None}
    for service in cluster.services_of_kind("osd"):
        number = service.name.removeprefix("osd.")
        if service.node in nodes and number.isdigit():
            osds.add(int(number))
    return osds


def swift_keys_on_nodes(cluster: Cluster, nodes: Iterable[str],
                        rings: Iterable[str] = RING_TYPES) -> set[str]:
    """The "<ring>:<node>/<device>" keys of these nodes' Swift devices (inventory disks with
    a swift_device), in the given rings: all three for a node off, one for a server."""
    nodes = _check_nodes(cluster, nodes)
    return {f"{ring}:{d.node}/{d.swift_device}" for d in cluster.disks
            if d.node in nodes and d.swift_device for ring in rings}
