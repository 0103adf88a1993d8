"""Choose and build the driver that loads a given cluster.

The API is "rados" (librados, Ceph only), "swift" (the Swift API: OpenStack
Swift, or Ceph RGW's Swift endpoint from the inventory's client.swift_api, for
an apples-to-apples comparison) or "s3" (client.s3: Ceph RGW's S3 endpoint, or Swift's
proxy with s3api). Each
driver module is imported only when it is chosen, so a client host that loads Swift needs
no python-rados.
Credentials that are missing or unreadable raise clusters' CredentialsError.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from clusters.access.credentials import s3_credentials, swift_credentials
from clusters.access.inventory import Cluster

from .exceptions import DriverError
from .openloop import container_names
from .workload import Workload

if TYPE_CHECKING:
    from .rados_driver import RadosDriver
    from .s3_driver import S3Driver
    from .swift_driver import SwiftDriver

APIS = {"ceph": ("rados", "swift", "s3"), "swift": ("swift", "s3")}  # the first is the default

# Swift and S3 workers: one thread and one keep-alive connection each. The open loop never has
# more than max_in_flight requests outstanding, so more workers than that would only idle.
# 64 is the cap because the workers are blocking http.client calls sharing one GIL: past a
# few dozen they add context switches rather than throughput, and hundreds of connections
# from one client would make a degraded proxy look like a connection storm. Requests beyond
# the workers wait in the driver's queue, and that wait counts in their latency (measured
# from the intended start), so the cap does not hide a stall. More load: more driver hosts.
SWIFT_MAX_WORKERS = 64


def driver_for(cluster: Cluster, workload: Workload,
               api: str | None = None) -> RadosDriver | SwiftDriver | S3Driver:
    if cluster.kind not in APIS:
        raise DriverError(f"no load driver for a {cluster.kind} cluster ({cluster.name})")
    valid = APIS[cluster.kind]
    api = api or valid[0]
    if api not in valid:
        known = {a for apis in APIS.values() for a in apis}
        problem = "does not apply to" if api in known else "is unknown for"
        raise DriverError(f"load API {api!r} {problem} {cluster.kind} cluster "
                          f"{cluster.name!r} (valid: {', '.join(valid)})")
    if workload.multipart_above is not None and api != "s3":
        raise DriverError(f"multipart_above applies to the S3 API only, not to {api!r}")
    containers = container_names(workload)
    if api == "rados":
        from .rados_driver import RadosDriver

        return RadosDriver(conf=cluster.client["conf"],
                           pool=cluster.client.get("pool", "faultline"),
                           containers=containers, keyring=cluster.client.get("keyring"))
    # a closed loop never has more than its workers in flight
    concurrency = min(workload.workers or workload.max_in_flight, SWIFT_MAX_WORKERS)
    if api == "s3":
        from .s3_driver import S3Driver

        return S3Driver(s3_credentials(cluster), containers=containers,
                        concurrency=concurrency, multipart_above=workload.multipart_above,
                        part_size=workload.part_size)
    from .swift_driver import SwiftDriver

    return SwiftDriver(swift_credentials(cluster), containers=containers,
                       concurrency=concurrency)
