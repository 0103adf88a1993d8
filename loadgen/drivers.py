"""Choose and build the driver that loads a given cluster."""

from __future__ import annotations

from clusters.inventory import Cluster

from .exceptions import DriverError
from .openloop import container_names
from .rados_driver import RadosDriver
from .workload import Workload


def driver_for(cluster: Cluster, workload: Workload) -> RadosDriver:
    if cluster.kind == "ceph":
        return RadosDriver(conf=cluster.client["conf"],
                           pool=cluster.client.get("pool", "faultline"),
                           containers=container_names(workload),
                           keyring=cluster.client.get("keyring"))
    raise DriverError(f"no load driver for a {cluster.kind} cluster yet ({cluster.name})")
