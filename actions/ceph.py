"""Ceph faults and their restores, as Chaos Toolkit actions.

Daemons are signalled by PID on the node that runs them (over SSH), as the
inventory describes; nothing is matched by process name.
"""

from __future__ import annotations

import random

from chaoslib.exceptions import ActivityFailed

from clusters import services
from clusters.config import cluster_from_configuration
from clusters.exceptions import ClusterError
from clusters.inventory import Cluster, Service

__all__ = ["kill_osd", "start_osd"]


def _osd(cluster: Cluster, osd_id: int) -> Service:
    try:
        return cluster.service(f"osd.{osd_id}")
    except ClusterError as exc:
        raise ActivityFailed(str(exc)) from None


def check_arguments(func: str, arguments: dict, cluster: Cluster) -> None:
    """Before a run: a named OSD is in the inventory."""
    if func not in ("kill_osd", "start_osd"):
        return
    osd_id = arguments.get("osd_id", -1)
    if isinstance(osd_id, bool) or not isinstance(osd_id, int):
        raise ActivityFailed(f"osd_id must be a whole number (-1: any), not {osd_id!r}")
    if osd_id >= 0:
        _osd(cluster, osd_id)


def kill_osd(osd_id: int = -1, configuration: dict = None) -> dict:
    """Kill one OSD daemon with SIGKILL, as a crash would: the named one, or a random
    running one when osd_id is -1. Returns the OSD id, its node and the PID killed."""
    cluster = cluster_from_configuration(configuration)
    try:
        if osd_id < 0:
            running = [s for s in cluster.services_of_kind("osd")
                       if services.pid_of(cluster, s) is not None]
            if not running:
                raise ActivityFailed(f"no OSD of {cluster.name} is running")
            service = random.choice(running)
        else:
            service = _osd(cluster, osd_id)
        pid = services.kill(cluster, service, "KILL")
    except ClusterError as exc:
        raise ActivityFailed(f"kill_osd: {exc}") from None
    return {"osd_id": int(service.name.split(".")[1]), "node": service.node, "pid": pid,
            "signal": "KILL"}


def start_osd(osd_id: int = -1, configuration: dict = None) -> dict:
    """Start an OSD daemon again (the restore of kill_osd): the named one, or every OSD
    that is not running when osd_id is -1. Returns the OSDs it started."""
    cluster = cluster_from_configuration(configuration)
    targets = ([_osd(cluster, osd_id)] if osd_id >= 0 else cluster.services_of_kind("osd"))
    started = []
    try:
        for service in targets:
            if services.pid_of(cluster, service) is None:
                services.start(cluster, service)
                started.append(service.name)
    except ClusterError as exc:
        raise ActivityFailed(f"start_osd: {exc}") from None
    return {"started": started}
