"""Read, before the fault, the settings that decide the cluster's recovery, for the run's
record (clusters/ceph/recovery_settings.py, clusters/swift/recovery_settings.py).

What could not be read is said in the record's `errors`; reading never stops a run (a
figure without its settings is still measured, and its report says they are unknown).
"""

from __future__ import annotations

import logging
import time
from typing import Any

from clusters.access.inventory import Cluster
from clusters.ceph import recovery_settings as ceph_settings
from clusters.ceph.admin import CephAdmin
from clusters.exceptions import ClusterError
from clusters.swift import recovery_settings as swift_settings
from clusters.swift.admin import SwiftAdmin

logger = logging.getLogger(__name__)
TIMEOUT_S = 10.0


def read(cluster: Cluster, api: str | None) -> dict[str, Any]:
    """{"system", "release", "read_at", "settings": [Setting dicts], "errors": [...]};
    `api` is the load's (None: the cluster's own), which says which Ceph pools count."""
    record: dict[str, Any] = {"system": cluster.kind, "release": "", "read_at": time.time(),
                              "settings": [], "errors": []}
    try:
        if cluster.kind == "ceph":
            with CephAdmin.for_cluster(cluster, timeout=TIMEOUT_S) as admin:
                through_rgw = api in ("swift", "s3")  # else librados, the default
                settings, release = ceph_settings.read(
                    admin, pool=None if through_rgw else cluster.client.get("pool", "faultline"),
                    rgw=through_rgw)
        else:
            with SwiftAdmin(cluster) as admin:
                settings, release, record["errors"] = swift_settings.read(cluster, admin)
    except (ClusterError, OSError, KeyError, TypeError, ValueError) as exc:  # or odd answers
        record["errors"].append(f"the recovery settings could not be read: {exc}")
        logger.warning(record["errors"][-1])
        return record
    record.update(release=release, settings=[s.as_dict() for s in settings])
    for error in record["errors"]:
        logger.warning(f"Recovery settings: {error}")
    return record
