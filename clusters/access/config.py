"""Which cluster an experiment targets: from the Chaos Toolkit configuration, env, or lab defaults.

Experiments name it with the configuration keys `faultline_cluster` and
`faultline_inventory` (usually bound to FAULTLINE_CLUSTER / FAULTLINE_INVENTORY),
so the same file runs under `chaos run` and `faultline run`.
"""

from __future__ import annotations

from typing import Any

from clusters.access.inventory import Cluster, load_cluster
from clusters.paths import default_cluster, default_inventory


def cluster_from_configuration(configuration: dict[str, Any] | None) -> Cluster:
    configuration = configuration or {}
    name = configuration.get("faultline_cluster") or default_cluster()
    inventory = configuration.get("faultline_inventory") or default_inventory()
    return load_cluster(inventory, name)
