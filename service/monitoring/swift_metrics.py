"""Prometheus metrics of a Swift cluster, from its recon and healthchecks.

Swift has no Prometheus exporter of its own (Ceph has its mgr module), so the service
exports what service.monitoring.cluster_health reads: servers down, devices unmounted, async
pendings, the age of each node's last replication pass and the disks' fill. Asked at
scrape time with cluster_health's deadline; an unreachable cluster gives
faultline_swift_up 0 and nothing else.
"""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector, CollectorRegistry

from clusters.access.inventory import Cluster

from .cluster_health import cluster_health


class SwiftCollector(Collector):
    def __init__(self, cluster: Cluster):
        self.cluster = cluster

    def collect(self) -> Iterator[Metric]:
        health = cluster_health(self.cluster)
        yield GaugeMetricFamily("faultline_swift_up", "1 if the cluster's recon answered",
                                value=float(health["reachable"]))
        state = health["state"]
        if state is None:
            return
        yield GaugeMetricFamily("faultline_swift_servers_down",
                                "Servers (and the proxy) not answering their healthcheck",
                                value=len(state["servers_down"]))
        yield GaugeMetricFamily("faultline_swift_unmounted_devices",
                                "Devices recon reports unmounted", value=len(state["unmounted"]))
        yield GaugeMetricFamily("faultline_swift_async_pending",
                                "Container updates waiting on the object servers",
                                value=state["async_pending"])
        yield GaugeMetricFamily("faultline_swift_storage_nodes", "Storage nodes asked",
                                value=state["storage_nodes"])
        ages = GaugeMetricFamily("faultline_swift_replication_age_seconds",
                                 "Since the node's last object replication pass",
                                 labels=["node"])
        for node, age in sorted(state["replication_age_s"].items()):
            if age is not None:
                ages.add_metric([node], age)
        yield ages
        used = GaugeMetricFamily("faultline_swift_disk_used_ratio",
                                 "Fill of each device (0-1)", labels=["device"])
        for device, ratio in sorted(state["disk_usage"].items()):
            if ratio is not None:
                used.add_metric([device], ratio)
        yield used


def registry(cluster: Cluster) -> CollectorRegistry:
    reg = CollectorRegistry(auto_describe=False)
    reg.register(SwiftCollector(cluster))
    return reg
