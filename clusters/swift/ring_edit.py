"""Change a Swift cluster's rings with Swift's own RingBuilder: add a device, set its weight,
remove it, rebalance; or tell where a device stands.

The builders (`<ring>.builder`) are read from and saved to the rings directory; each changed
ring is written beside them as `<ring>.ring.gz.staged`, for clusters/swift/new_device.py to push
to the nodes. Swift is imported only in this child process (as in clusters/swift/ring.py).

min_part_hours: Swift refuses to move a partition again within that many hours of its last
move, so that no two replicas of it are ever in flight at once. Scale rebalances only after
it has seen replication finish moving the previous change (no handoff partition left,
dispersion 100%: what min_part_hours stands in for), so it tells the builder the hours have
passed (`pretend_min_part_hours_passed`); otherwise a ring built less than an hour ago (a
lab's) or a device added minutes ago could never be rebalanced or drained.

A run killed between saving a builder and the end of its push leaves the builder ahead of
the admin's ring file (and some nodes new, some old): `stage` writes the staged ring again
for each ring whose builder's ring differs from the admin's, so the next push finishes it.

    python -m clusters.swift.ring_edit RINGS_DIR '{"op": "show"|"add"|"weight"|"remove", ...}'
    python -m clusters.swift.ring_edit RINGS_DIR '{"op": "stage", "rings": [...]}'
"""

from __future__ import annotations

import gzip
import json
import os
import sys
from typing import Any

from clusters.exceptions import InvalidScale
from clusters.swift.ring import swift_child

SCALE_META = "added by faultline scale"  # marks a device scale added: only those it removes


def edit_rings(rings_dir: str, change: dict[str, Any], timeout_s: float = 120.0
               ) -> dict[str, Any]:
    """Apply `change` in a child process; {ring: {"present", "weight", "meta", "parts",
    "moved", "balance"}} for the device named by change's ip and device."""
    missing = [ring for ring in change["rings"]
               if not os.path.exists(os.path.join(rings_dir, f"{ring}.builder"))]
    if missing:
        raise InvalidScale(f"no {', '.join(r + '.builder' for r in missing)} in {rings_dir} "
                           "(scale needs the ring builders)")
    return swift_child(__name__, [rings_dir, json.dumps(change)],
                       f"{change.get('op')} the device in the rings of {rings_dir}", timeout_s)


def _find(builder, ip: str, device: str) -> dict | None:
    return next((d for d in builder.devs if d and d["ip"] == ip and d["device"] == device),
                None)


def _parts_of(builder, dev_id: int) -> int:
    return sum(1 for part2dev in builder._replica2part2dev for d in part2dev if d == dev_id)


def _save(builder, rings_dir: str, ring_type: str) -> None:
    """The builder, then the staged ring, each written whole before it replaces the old."""
    path = os.path.join(rings_dir, f"{ring_type}.builder")
    builder.save(path + ".partial")
    os.replace(path + ".partial", path)
    staged = os.path.join(rings_dir, f"{ring_type}.ring.gz.staged")
    builder.get_ring().save(staged + ".partial")
    os.replace(staged + ".partial", staged)


def same_ring(path: str, other: str) -> bool:
    """Whether two ring files hold the same ring (their gzip headers name different files)."""
    with gzip.open(path) as one, gzip.open(other) as two:
        return one.read() == two.read()


def _stage(rings_dir: str, rings: list[str]) -> dict[str, bool]:
    """{ring: staged}: the builder's ring staged where it is not the admin's ring file."""
    from swift.common.ring import RingBuilder

    from clusters.swift.ring_files import check_builder_file, forbid_pickle

    forbid_pickle()
    out = {}
    for ring_type in rings:
        check_builder_file(os.path.join(rings_dir, f"{ring_type}.builder"))
        builder = RingBuilder.load(os.path.join(rings_dir, f"{ring_type}.builder"))
        current = os.path.join(rings_dir, f"{ring_type}.ring.gz")
        staged = os.path.join(rings_dir, f"{ring_type}.ring.gz.staged")
        builder.get_ring().save(staged + ".partial")
        out[ring_type] = not (os.path.exists(current) and same_ring(staged + ".partial",
                                                                    current))
        if out[ring_type]:
            os.replace(staged + ".partial", staged)
        else:
            os.remove(staged + ".partial")
            if os.path.exists(staged):
                os.remove(staged)  # left by an older change the admin's copy has already
    return out


def _edit(rings_dir: str, change: dict[str, Any]) -> dict[str, Any]:
    from swift.common.ring import RingBuilder

    from clusters.swift.ring_files import check_builder_file, forbid_pickle

    forbid_pickle()
    out = {}
    for ring_type in change["rings"]:
        check_builder_file(os.path.join(rings_dir, f"{ring_type}.builder"))
        builder = RingBuilder.load(os.path.join(rings_dir, f"{ring_type}.builder"))
        dev = _find(builder, change["ip"], change["device"])
        moved, op = 0, change["op"]
        if op == "add" and dev is None:
            port = change["ports"][ring_type]
            builder.add_dev({"region": change.get("region", 1), "zone": change["zone"],
                             "ip": change["ip"], "port": port,
                             "replication_ip": change["ip"], "replication_port": port,
                             "device": change["device"], "weight": change["weight"],
                             "meta": SCALE_META})
        elif op == "weight" and dev is not None:
            builder.set_dev_weight(dev["id"], change["weight"])
        elif op == "remove" and dev is not None:
            builder.remove_dev(dev["id"])
        elif op != "show":
            continue  # already as asked: nothing to rebalance
        if op != "show":
            builder.pretend_min_part_hours_passed()  # see the module docstring
            moved, _, _ = builder.rebalance()
            _save(builder, rings_dir, ring_type)
        dev = _find(builder, change["ip"], change["device"])
        out[ring_type] = {"present": dev is not None, "moved": moved,
                          "balance": round(builder.get_balance(), 2),
                          "weight": dev["weight"] if dev else None,
                          "meta": dev.get("meta", "") if dev else None,
                          "parts": _parts_of(builder, dev["id"]) if dev else 0}
    return out


if __name__ == "__main__":
    from clusters.swift.ring_files import answer

    asked = json.loads(sys.argv[2])
    if asked["op"] == "stage":
        answer(lambda: _stage(sys.argv[1], asked["rings"]))
    else:
        answer(lambda: _edit(sys.argv[1], asked))
