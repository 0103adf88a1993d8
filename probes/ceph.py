"""Ceph health and redundancy probes for Chaos Toolkit, read through python-rados."""

from __future__ import annotations

import time

from chaoslib.exceptions import ActivityFailed

from clusters.access.config import cluster_from_configuration
from clusters.ceph.admin import CephAdmin, CephState
from clusters.exceptions import ClusterError

__all__ = ["health_ok", "wait_for_health_ok", "degraded_objects", "cluster_state"]


def _state(configuration: dict | None) -> CephState:
    cluster = cluster_from_configuration(configuration)
    try:
        with CephAdmin.for_cluster(cluster) as admin:
            return admin.state()
    except ClusterError as exc:
        raise ActivityFailed(str(exc)) from None


def health_ok(settle_s: float = 0, configuration: dict = None) -> bool:
    """True when the cluster is HEALTH_OK with every PG active+clean; with settle_s, True
    as soon as it is within that many seconds (a cluster still settling from an earlier
    run, or a PG briefly peering on a busy machine, is given the time)."""
    if settle_s <= 0:
        return _state(configuration).fully_redundant
    cluster = cluster_from_configuration(configuration)
    try:
        with CephAdmin.for_cluster(cluster) as admin:
            _, waited = admin.wait_until(lambda s: s.fully_redundant, settle_s)
    except ClusterError as exc:
        raise ActivityFailed(str(exc)) from None
    return waited is not None


def cluster_state(configuration: dict = None) -> dict:
    """Health, OSDs up/in, PG states and degraded/misplaced object counts."""
    return _state(configuration).as_dict()


def degraded_objects(configuration: dict = None) -> int:
    """Number of object copies the cluster reports as degraded."""
    return _state(configuration).degraded_objects


def wait_for_health_ok(timeout_s: float = 300, require_all_up: bool = False,
                       hold_s: float = 10, after_fault_seen: bool = False,
                       configuration: dict = None) -> dict:
    """Wait until HEALTH_OK with every PG active+clean has held for hold_s seconds (Ceph
    reports every PG clean for a few seconds right after an OSD boots or is marked out,
    before peering starts). With require_all_up, every OSD must also be up and in.

    With after_fault_seen, first wait until the cluster reports the fault (an OSD down):
    a silent node or a partition goes unnoticed for the heartbeat grace, and a cluster
    that has not noticed yet is HEALTH_OK without having healed anything.
    Fails after timeout_s (both waits together) with the last state seen."""
    cluster = cluster_from_configuration(configuration)
    started = time.monotonic()

    def good(state: CephState) -> bool:
        return state.fully_redundant and (
            not require_all_up or state.num_up_osds == state.num_in_osds == state.num_osds)

    try:
        with CephAdmin.for_cluster(cluster) as admin:
            if after_fault_seen:
                last, noticed = admin.wait_until(lambda s: s.fault_seen, timeout_s, hold_s=0)
                if noticed is None:
                    seen = "nothing" if last is None else last.summary()
                    raise ActivityFailed(f"{cluster.name} never reported the fault within "
                                         f"{timeout_s:.0f} s (last seen: {seen})")
            left = max(1.0, timeout_s - (time.monotonic() - started))
            last, waited = admin.wait_until(good, left, hold_s=hold_s)
    except ClusterError as exc:
        raise ActivityFailed(str(exc)) from None
    if waited is not None:
        return {"waited_s": round(time.monotonic() - started, 3), **last.as_dict()}
    seen = "nothing" if last is None else last.summary()
    raise ActivityFailed(f"{cluster.name} not HEALTH_OK with all PGs active+clean for "
                         f"{hold_s:.0f} s within {timeout_s:.0f} s (last seen: {seen})")
