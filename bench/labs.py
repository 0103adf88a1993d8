"""The labs the benchmarks load: brought up if they are not (`faultline lab up`), never
taken down here (`make lab-down` does)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from clusters.access.inventory import Cluster, load_cluster, load_inventory
from clusters.ceph.admin import CephAdmin
from clusters.paths import default_inventory

REPO = Path(__file__).resolve().parents[1]
NAMES = {"ceph": "lab-ceph", "swift": "lab-swift"}


def cluster(kind: str) -> Cluster:
    """The lab cluster of this kind, started first if the inventory does not have it."""
    name = NAMES[kind]
    inventory = default_inventory()
    if not inventory.exists() or name not in load_inventory(inventory):
        print(f"bench: starting the {kind} lab", file=sys.stderr, flush=True)
        subprocess.run([str(REPO / ".venv" / "bin" / "faultline"), "lab", "up", kind],
                       check=True, cwd=REPO)
    return load_cluster(inventory, name)


def ceph_not_whole(cluster: Cluster) -> str | None:
    """Why the Ceph lab is not whole (an OSD down or out, a PG not active+clean), or None.
    A benchmark measures the lab, not a degraded lab: an OSD that died under its load (a
    2 GiB OSD's BlueFS ran out of space during a P1 run) leaves every PG on the others."""
    with CephAdmin.for_cluster(cluster) as admin:
        state = admin.state()
    whole = (state.num_up_osds == state.num_in_osds == state.num_osds > 0
             and state.num_pgs > 0 and state.clean_pgs == state.num_pgs)
    return None if whole else state.summary()
