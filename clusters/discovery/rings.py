"""Read Swift ring files with Swift's own reader (`RingData.load`), in a child process.

Importing Swift swaps the logging module's locks for eventlet's (see
clusters/swift/ring.py), so the rings are loaded by `python -m clusters.discovery.rings
FILE...`, which prints their devices and replica counts as JSON.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from clusters.exceptions import InventoryError

# object.ring.gz, container.ring.gz, account.ring.gz, object-1.ring.gz (a storage policy)
RING_FILE = re.compile(r"^(object|container|account)(-\d+)?\.ring\.gz$")
DEVICE_KEYS = ("id", "region", "zone", "ip", "port", "replication_ip", "replication_port",
               "device", "meta", "weight")


def ring_files(paths: list[str]) -> list[Path]:
    """The ring files named, or found in the directories named; InventoryError if none."""
    found: list[Path] = []
    for given in map(Path, paths):
        if given.is_dir():
            inside = sorted(p for p in given.iterdir() if RING_FILE.match(p.name))
            if not inside:
                raise InventoryError(f"no Swift ring file (object.ring.gz, ...) in {given}")
            found.extend(inside)
        elif not given.exists():
            raise InventoryError(f"{given} does not exist")
        elif not RING_FILE.match(given.name):
            raise InventoryError(f"{given} is not a ring file (expected object.ring.gz, "
                                 "container.ring.gz, account.ring.gz or object-N.ring.gz)")
        else:
            found.append(given)
    if not found:
        raise InventoryError("no Swift ring file given")
    return found


def read_rings(files: list[Path], timeout_s: float = 60.0) -> dict[str, dict[str, Any]]:
    """{ring name ("object", "object-1", ...): {"replicas": n, "devices": [...]}}."""
    try:
        done = subprocess.run([sys.executable, "-m", __name__, *map(str, files)],
                              capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        raise InventoryError(f"reading the rings took over {timeout_s:.0f} s") from None
    if done.returncode != 0:
        # the last line: the reason; runpy's warning about the package may come first
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise InventoryError(f"cannot read the Swift ring {last}")
    return json.loads(done.stdout)


def _dump(files: list[str]) -> dict[str, dict[str, Any]]:
    from swift.common.ring import RingData

    from clusters.swift.ring_files import forbid_pickle

    forbid_pickle()
    rings = {}
    for file in files:
        try:
            ring = RingData.load(file)
        except Exception as exc:  # noqa: BLE001 - whatever a bad file raises, say which
            raise SystemExit(f"{file}: {exc or type(exc).__name__}") from None
        rings[Path(file).name.removesuffix(".ring.gz")] = {
            "replicas": ring.replica_count,
            "devices": [{k: d.get(k) for k in DEVICE_KEYS} for d in ring.devs if d]}
    return rings


if __name__ == "__main__":
    try:
        print(json.dumps(_dump(sys.argv[1:])), flush=True)
    except SystemExit as exc:
        print(exc, file=sys.stderr, flush=True)
        os._exit(2)
    os._exit(0)  # skip the interpreter's teardown, where eventlet complains
