"""A cluster's live health, asked with a short deadline, for the dashboard.

Ceph: the monitors' `status` (clusters.ceph.admin: health, OSDs up/in, PGs active+clean,
degraded and misplaced objects). Swift: every storage server's healthcheck and recon
(clusters.swift.admin: servers down, devices unmounted, async pendings, disk usage, the
age of the last replication pass) and the proxy's healthcheck; the dispersion report
(about a second of CPU, a minute on a sick cluster) and the handoff listing (SSH to every
node) are left to the runs' sampler.

`cluster_health` never raises for the cluster's sake: a cluster that cannot be reached
in time gives {"reachable": false, "error": <reason>}. The question runs in a thread of
its own, so a client library that ignores its timeout cannot hold the caller past the
deadline.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

from clusters.access.inventory import Cluster

DEADLINE_S = 8.0


def cluster_health(cluster: Cluster, deadline_s: float = DEADLINE_S) -> dict[str, Any]:
    """{"cluster", "kind", "reachable", "health", "summary", "state", "error", "took_s"}."""
    started = time.monotonic()
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="faultline-health")
    future = pool.submit(_ask, cluster, max(1.0, deadline_s / 3))
    try:
        health, summary, state = future.result(timeout=deadline_s)
        error = None
    except FutureTimeout:
        error = f"no answer within {deadline_s:.0f} s"
    except Exception as exc:  # whatever the client library raised: say it, do not fail
        error = str(exc) or type(exc).__name__
    finally:
        pool.shutdown(wait=False)
    out: dict[str, Any] = {"cluster": cluster.name, "kind": cluster.kind,
                           "reachable": error is None,
                           "took_s": round(time.monotonic() - started, 2)}
    if error is not None:
        return out | {"health": "UNREACHABLE", "summary": f"unreachable: {error}",
                      "state": None, "error": error}
    return out | {"health": health, "summary": summary, "state": state, "error": None}


def _ask(cluster: Cluster, timeout_s: float) -> tuple[str, str, dict[str, Any]]:
    if cluster.kind == "ceph":
        return _ceph(cluster, timeout_s)
    if cluster.kind == "swift":
        return _swift(cluster, timeout_s)
    raise ValueError(f"no health check for a {cluster.kind} cluster")


def _ceph(cluster: Cluster, timeout_s: float) -> tuple[str, str, dict[str, Any]]:
    import rados  # python-rados, only where it is needed

    from clusters.ceph.admin import CephAdmin

    try:
        admin = CephAdmin.for_cluster(cluster, timeout=timeout_s)
    except rados.Error as exc:  # the conf file is missing or unreadable
        raise ValueError(f"cannot read {cluster.client.get('conf')}: {exc}") from None
    with admin:
        state = admin.state()
    data = state.as_dict() | {"clean_pgs": state.clean_pgs}
    return state.health, state.summary(), data


def _swift(cluster: Cluster, timeout_s: float) -> tuple[str, str, dict[str, Any]]:
    from clusters.swift.admin import SwiftAdmin

    with SwiftAdmin(cluster, timeout=timeout_s) as admin:
        nodes = admin.recon()
        proxy_up = admin.proxy_up()
    down = ([] if proxy_up else ["proxy-server"]) + [
        f"{kind}-server.{n.node}" for n in nodes for kind, up in n.servers_up.items() if not up]
    unmounted = [f"{n.node}/{d}" for n in nodes for d in n.unmounted]
    now = time.time()
    ages = {n.node: (round(now - n.replication_last) if n.replication_last else None)
            for n in nodes}
    state = {"proxy_up": proxy_up, "servers_down": down, "unmounted": unmounted,
             "async_pending": sum(n.async_pending or 0 for n in nodes),
             "replication_age_s": ages,
             "disk_usage": {f"{n.node}/{dev}": used for n in nodes
                            for dev, used in n.disk_usage.items()},
             "storage_nodes": len(nodes)}
    health = "FAULT" if down or unmounted else "OK"
    problems = ", ".join(down + [f"{u} unmounted" for u in unmounted]) or "every server answers"
    oldest = max((a for a in ages.values() if a is not None), default=None)
    summary = (f"{health}: {problems}; {state['async_pending']} async pendings; last "
               f"replication pass {'unknown' if oldest is None else f'{oldest} s ago at most'}")
    return health, summary, state
