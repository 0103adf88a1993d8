"""The labs the benchmarks load: brought up if they are not (`faultline lab up`), never
taken down here (`make lab-down` does)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from clusters.access.inventory import Cluster, load_cluster, load_inventory
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
