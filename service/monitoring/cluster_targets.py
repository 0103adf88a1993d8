"""Which endpoint Prometheus scrapes for each cluster of the inventory, as HTTP service
discovery target groups (`/prometheus/clusters?kind=...`).

The service reads its inventory at every refresh, so a lab that comes up is scraped within
one refresh interval, and one that goes down (labs take themselves out of the inventory)
stops being scraped; Prometheus is never restarted or reloaded for it.

- A Ceph cluster: its mgr prometheus module, at the URL of its `client.prometheus`; one
  without it has no metrics endpoint and is not scraped.
- A Swift cluster: the service's own `/clusters/<name>/metrics` (Swift has no exporter: the
  service turns its recon into metrics), on the address Prometheus reached the service at.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any
from urllib.parse import quote, urlsplit

from clusters.access.inventory import Cluster

KINDS = ("ceph", "swift")


def target_groups(clusters: Iterable[Cluster], kind: str, service_scheme: str,
                  service_host: str) -> list[dict[str, Any]]:
    """The clusters of `kind` as Prometheus' target groups, each labelled with its name."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, not {kind!r}")
    groups = []
    for cluster in sorted(clusters, key=lambda c: c.name):
        if cluster.kind != kind:
            continue
        if kind == "swift":
            url = urlsplit(f"{service_scheme}://{service_host}"
                           f"/clusters/{quote(cluster.name, safe='')}/metrics")
        elif cluster.client.get("prometheus"):
            url = urlsplit(str(cluster.client["prometheus"]))
        else:
            continue
        groups.append({"targets": [url.netloc], "labels": {
            "cluster": cluster.name, "__scheme__": url.scheme,
            "__metrics_path__": url.path or "/metrics"}})
    return groups
