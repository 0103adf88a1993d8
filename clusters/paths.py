"""Where Faultline keeps its state on this machine (lab, embedded database, ledgers).

`FAULTLINE_HOME` overrides the default; the lab is machine-wide (namespaces,
a bridge, loop devices), so its state is too: /var/lib/faultline for root.
"""

import os
from pathlib import Path


def state_dir() -> Path:
    env = os.environ.get("FAULTLINE_HOME")
    if env:
        return Path(env)
    if os.geteuid() == 0:
        return Path("/var/lib/faultline")
    return Path.home() / ".local" / "state" / "faultline"


def default_inventory() -> Path:
    return Path(os.environ.get("FAULTLINE_INVENTORY") or state_dir() / "inventory.yaml")


def default_cluster() -> str:
    return os.environ.get("FAULTLINE_CLUSTER", "lab-ceph")
