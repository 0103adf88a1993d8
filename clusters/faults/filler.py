"""Fill a cluster to a target fraction of its raw capacity, and empty it again.

The fill lives apart from the experiment's own data: Ceph, the RADOS namespace
`faultline-fill` of the cluster's pool (no new pool: creating one re-peers PGs
and needs rights a chaos run should not need); Swift, the container
`faultline-fill` of the Faultline account. Raw usage is what the cluster says:
Ceph `df` (total_used_raw_ratio, every replica and BlueStore's own space
counted), Swift the sum of every device's recon `diskusage`.

Writing goes in rounds: the bytes still missing are estimated from the current
usage and the replica count, 90% of them are written, usage is read again, until
the target is reached; so the fill overshoots by less than one round's error.
"""

from __future__ import annotations

import json
import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from urllib.parse import quote

import rados

from clusters.access.credentials import swift_credentials
from clusters.access.http import request
from clusters.access.inventory import Cluster
from clusters.ceph.admin import CephAdmin
from clusters.exceptions import AdminCommandFailed, ClusterError

FILL_NAME = "faultline-fill"
IN_FLIGHT = 8


class FillError(ClusterError):
    pass


@dataclass(frozen=True)
class Usage:
    used: int
    total: int

    @property
    def fraction(self) -> float:
        return self.used / self.total if self.total else 0.0


# -- Ceph ------------------------------------------------------------------------------------


def ceph_usage(admin: CephAdmin) -> Usage:
    stats = admin.command("df")["stats"]
    return Usage(int(stats["total_used_raw_bytes"]), int(stats["total_bytes"]))


def _ceph_replicas(admin: CephAdmin, pool: str) -> int:
    return int(admin.command("osd pool get", pool=pool, var="size")["size"])


class CephFill:
    def __init__(self, cluster: Cluster, timeout: float = 60.0):
        self.pool = cluster.client.get("pool", "faultline")
        self.admin = CephAdmin.for_cluster(cluster, timeout=timeout)

    def __enter__(self) -> CephFill:
        self.admin.connect()
        self.ioctx = self.admin.rados.open_ioctx(self.pool)
        self.ioctx.set_namespace(FILL_NAME)
        return self

    def __exit__(self, *exc) -> None:
        self.ioctx.close()
        self.admin.close()

    def usage(self) -> Usage:
        return ceph_usage(self.admin)

    def replicas(self) -> int:
        return _ceph_replicas(self.admin, self.pool)

    def write(self, names: list[str], payload: bytes) -> None:
        for start in range(0, len(names), IN_FLIGHT):
            batch = [self.ioctx.aio_write_full(name, payload)
                     for name in names[start:start + IN_FLIGHT]]
            for completion in batch:
                completion.wait_for_complete()
                if completion.get_return_value() < 0:
                    raise FillError(f"writing the fill into pool {self.pool} failed: "
                                    f"error {completion.get_return_value()}")

    def names(self) -> list[str]:
        return [obj.key for obj in self.ioctx.list_objects()]

    def delete(self, names: list[str]) -> None:
        for start in range(0, len(names), IN_FLIGHT * 4):
            batch = [self.ioctx.aio_remove(n) for n in names[start:start + IN_FLIGHT * 4]]
            for completion in batch:
                completion.wait_for_complete()


# -- Swift -----------------------------------------------------------------------------------


def swift_usage(cluster: Cluster, ports: dict[str, int], timeout: float = 5.0) -> Usage:
    used = total = 0
    for node in {d.node for d in cluster.disks}:
        address = cluster.node(node).address
        status, _, body = request(f"http://{address}:{ports['object']}/recon/diskusage", "GET",
                                {}, timeout=timeout)
        if status != 200:
            raise FillError(f"recon diskusage of {node} answered {status}")
        for device in json.loads(body):
            if device.get("mounted") and device.get("size"):
                used += int(device["used"])
                total += int(device["size"])
    return Usage(used, total)


class SwiftFill:
    def __init__(self, cluster: Cluster):
        self.cluster = cluster
        self.ports = {"object": 6200, **(cluster.client.get("ports") or {})}

    def __enter__(self) -> SwiftFill:
        creds = swift_credentials(self.cluster)
        status, headers, _ = request(creds.auth_url, "GET",
                                   {"X-Auth-User": creds.user, "X-Auth-Key": creds.key})
        if status not in (200, 204) or "x-auth-token" not in headers:
            raise FillError(f"Swift auth at {creds.auth_url} answered {status}")
        self.auth = {"X-Auth-Token": headers["x-auth-token"]}
        self.container = f"{headers['x-storage-url']}/{FILL_NAME}"
        status, _, _ = request(self.container, "PUT", self.auth)
        if status not in (201, 202):
            raise FillError(f"cannot create container {FILL_NAME}: {status}")
        return self

    def __exit__(self, *exc) -> None:
        pass

    def usage(self) -> Usage:
        return swift_usage(self.cluster, self.ports)

    def replicas(self) -> int:
        return int(self.cluster.client.get("replicas", 3))

    def _put(self, name: str, payload: bytes) -> None:
        status, _, _ = request(f"{self.container}/{quote(name)}", "PUT", self.auth, payload)
        if status != 201:
            raise FillError(f"PUT {FILL_NAME}/{name} answered {status}")

    def write(self, names: list[str], payload: bytes) -> None:
        with ThreadPoolExecutor(max_workers=IN_FLIGHT // 2) as pool:
            list(pool.map(lambda n: self._put(n, payload), names))

    def names(self) -> list[str]:
        status, _, body = request(f"{self.container}?format=json&limit=10000", "GET", self.auth)
        if status == 404:
            return []
        if status != 200:
            raise FillError(f"cannot list {FILL_NAME}: {status}")
        return [o["name"] for o in json.loads(body)]

    def delete(self, names: list[str]) -> None:
        def one(name: str) -> None:
            request(f"{self.container}/{quote(name)}", "DELETE", self.auth)
        with ThreadPoolExecutor(max_workers=IN_FLIGHT) as pool:
            list(pool.map(one, names))

    def drop_container(self) -> None:
        request(self.container, "DELETE", self.auth)


# -- both ------------------------------------------------------------------------------------


def filler_for(cluster: Cluster) -> CephFill | SwiftFill:
    return CephFill(cluster) if cluster.kind == "ceph" else SwiftFill(cluster)


def fill_to(cluster: Cluster, target: float, object_bytes: int,
            timeout_s: float = 1800.0, settle_s: float = 3.0) -> dict:
    """Write fill objects until raw usage >= target; returns before/after usage and counts."""
    started = time.monotonic()
    payload = os.urandom(object_bytes)
    try:
        with filler_for(cluster) as filler:
            before = filler.usage()
            replicas = filler.replicas()
            existing = len(filler.names())
            written, usage = 0, before
            while usage.fraction < target:
                if time.monotonic() - started > timeout_s:
                    raise FillError(f"raw usage {usage.fraction:.1%} after {timeout_s:.0f} s, "
                                    f"short of {target:.0%}")
                missing = (target - usage.fraction) * usage.total / replicas
                count = max(1, int(missing * 0.9 / object_bytes))
                names = [f"fill-{existing + written + i:07d}" for i in range(count)]
                filler.write(names, payload)
                written += count
                time.sleep(settle_s)  # usage reaches `df` / recon with the next stats report
                usage = filler.usage()
    except (rados.Error, OSError, AdminCommandFailed) as exc:
        raise FillError(f"filling {cluster.name}: {exc}") from None
    return {"target": target, "before": round(before.fraction, 4),
            "after": round(usage.fraction, 4), "objects": written, "existing": existing,
            "bytes": written * object_bytes, "seconds": round(time.monotonic() - started, 1)}


def fill_count(cluster: Cluster, count: int, object_bytes: int,
               timeout_s: float = 1800.0, batch: int = 500) -> dict:
    """Write exactly `count` fill objects (after those already there); returns the usage
    before and after, as fill_to does."""
    started = time.monotonic()
    payload = os.urandom(object_bytes)
    try:
        with filler_for(cluster) as filler:
            before = filler.usage()
            existing = len(filler.names())
            for first in range(0, count, batch):
                if time.monotonic() - started > timeout_s:
                    raise FillError(f"{first} of {count} fill objects written after "
                                    f"{timeout_s:.0f} s")
                filler.write([f"fill-{existing + i:07d}"
                              for i in range(first, min(count, first + batch))], payload)
            usage = filler.usage()
    except (rados.Error, OSError, AdminCommandFailed) as exc:
        raise FillError(f"filling {cluster.name}: {exc}") from None
    return {"objects_wanted": count, "before": round(before.fraction, 4),
            "after": round(usage.fraction, 4), "objects": count, "existing": existing,
            "bytes": count * object_bytes, "seconds": round(time.monotonic() - started, 1)}


def remove_fill(cluster: Cluster) -> dict:
    """Delete every fill object (idempotent)."""
    started = time.monotonic()
    try:
        with filler_for(cluster) as filler:
            names = filler.names()
            filler.delete(names)
            if isinstance(filler, SwiftFill):
                filler.drop_container()
            usage = filler.usage()
    except (rados.Error, OSError, AdminCommandFailed) as exc:
        raise FillError(f"removing the fill of {cluster.name}: {exc}") from None
    return {"deleted": len(names), "usage": round(usage.fraction, 4),
            "seconds": round(time.monotonic() - started, 1)}
