"""Where a Swift object lives: its partition, its name hash and the ring's primary devices
for it, computed by Swift's own `Ring` and `hash_path`.

Swift is imported only in a child process, as in clusters/swift/ring.py, and that process
finds its swift.conf (the hash path prefix and suffix) as Swift's own tools do here: with
the inventory's `client.swift_conf` through SWIFT_CONF_FILE and the shim the admin client
uses (clusters/swift/admin.py). It must hash as the object servers do: a hash they do not
share names a directory that holds nothing, which the corruption refuses to go on with.

    python -m clusters.swift.locate SWIFT_DIR ACCOUNT CONTAINER OBJECT
"""

from __future__ import annotations

import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from clusters.swift.conf_shim import write_shim
from clusters.swift.ring import swift_child


@dataclass(frozen=True)
class ObjectLocation:
    partition: int
    hash: str
    primaries: tuple[tuple[str, int, str], ...]  # (ip, port, device), in the ring's order
    replicas: int  # the ring's replica count


def locate(swift_dir: str, swift_conf: str | None, account: str, container: str, obj: str,
           timeout_s: float = 60.0) -> ObjectLocation:
    """The object's place in the object ring (in a child process)."""
    with tempfile.TemporaryDirectory(prefix="faultline-locate-") as tmp:
        env = dict(os.environ)
        if swift_conf:
            write_shim(Path(tmp))
            env.update(SWIFT_CONF_FILE=swift_conf, PYTHONPATH=tmp)
        raw = swift_child(__name__, [swift_dir, account, container, obj],
                          f"locate {container}/{obj} in the rings of {swift_dir}", timeout_s,
                          env=env)
    return ObjectLocation(partition=int(raw["partition"]), hash=raw["hash"],
                          primaries=tuple(tuple(p) for p in raw["primaries"]),
                          replicas=int(raw["replicas"]))


def _locate(swift_dir: str, account: str, container: str, obj: str) -> dict:
    import swift.common.utils as utils
    from swift.common.ring import Ring

    from clusters.swift.ring_files import forbid_pickle

    forbid_pickle()
    utils.validate_hash_conf()  # as a server does before its first request
    ring = Ring(swift_dir, ring_name="object")
    partition, nodes = ring.get_nodes(account, container, obj)
    return {"partition": partition, "hash": utils.hash_path(account, container, obj),
            "primaries": [[n["ip"], n["port"], n["device"]] for n in nodes],
            "replicas": ring.replica_count}


if __name__ == "__main__":
    from clusters.swift.ring_files import answer

    answer(lambda: _locate(*sys.argv[1:5]))
