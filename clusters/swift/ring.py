"""Facts of a Swift cluster's rings, read with Swift's own `Ring` class.

Replicas, zones and devices of each ring, and the primary devices of every
partition of each ring (what the handoff count compares with).
Swift is imported only in a child process: importing it swaps the logging
module's locks for eventlet's, which Faultline's own threads must never meet.

    python -m clusters.swift.ring SWIFT_DIR      # prints the facts as JSON
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from typing import Any

from clusters.exceptions import AdminCommandFailed

RING_TYPES = ("object", "container", "account")


@dataclass(frozen=True)
class RingDevice:
    id: int
    zone: int
    ip: str
    port: int
    device: str


@dataclass(frozen=True)
class RingFacts:
    replicas: dict[str, float]
    devices: dict[str, tuple[RingDevice, ...]]
    primaries: dict[str, tuple[tuple[int, ...], ...]]  # ring -> partition -> device ids

    def zones(self, ring: str = "object") -> list[int]:
        return sorted({d.zone for d in self.devices[ring]})

    def device_id(self, ip: str, device: str, ring: str = "object") -> int | None:
        """The ring id of the device `device` on the server at `ip` (None if not in the ring)."""
        for d in self.devices[ring]:
            if d.ip == ip and d.device == device:
                return d.id
        return None

    def is_primary(self, partition: int, device_id: int, ring: str = "object") -> bool:
        parts = self.primaries[ring]
        return 0 <= partition < len(parts) and device_id in parts[partition]

    def as_dict(self) -> dict[str, Any]:
        return {"replicas": self.replicas,
                "zones": {ring: self.zones(ring) for ring in self.devices},
                "devices": {ring: [d.__dict__ for d in devs]
                            for ring, devs in self.devices.items()},
                "partitions": {ring: len(parts) for ring, parts in self.primaries.items()}}


def parse_facts(raw: dict[str, Any]) -> RingFacts:
    return RingFacts(
        replicas={ring: float(r) for ring, r in raw["replicas"].items()},
        devices={ring: tuple(RingDevice(**d) for d in devs)
                 for ring, devs in raw["devices"].items()},
        primaries={ring: tuple(tuple(p) for p in parts)
                   for ring, parts in raw["primaries"].items()})


def swift_child(module: str, arguments: list[str], what: str, timeout_s: float,
                env: dict[str, str] | None = None) -> Any:
    """Run `python -m module arguments...` (a module that imports Swift) and decode the JSON
    it prints; AdminCommandFailed "cannot <what>: ..." otherwise."""
    try:
        done = subprocess.run([sys.executable, "-m", module, *arguments], capture_output=True,
                              text=True, timeout=timeout_s, env=env)
    except subprocess.TimeoutExpired:
        raise AdminCommandFailed(f"cannot {what} within {timeout_s:.0f} s") from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise AdminCommandFailed(f"cannot {what}: {last}")
    try:
        return json.loads(done.stdout)
    except ValueError as exc:
        raise AdminCommandFailed(f"cannot {what}: unexpected output: {exc}") from None


def read_ring_facts(swift_dir: str, timeout_s: float = 60.0) -> RingFacts:
    """Load the rings of `swift_dir` (in a child process) and return their facts."""
    raw = swift_child(__name__, [swift_dir], f"read the Swift rings in {swift_dir}",
                      timeout_s)
    try:
        return parse_facts(raw)
    except (KeyError, TypeError) as exc:
        raise AdminCommandFailed(f"unexpected ring facts from {swift_dir}: {exc}") from None


def _dump(swift_dir: str) -> dict[str, Any]:
    from swift.common.ring import Ring

    from clusters.swift.ring_files import forbid_pickle

    forbid_pickle()
    out: dict[str, Any] = {"replicas": {}, "devices": {}, "primaries": {}}
    for ring_type in RING_TYPES:
        ring = Ring(swift_dir, ring_name=ring_type)
        out["replicas"][ring_type] = ring.replica_count
        out["devices"][ring_type] = [
            {"id": d["id"], "zone": d["zone"], "ip": d["ip"], "port": d["port"],
             "device": d["device"]} for d in ring.devs if d]
        out["primaries"][ring_type] = [[d["id"] for d in ring.get_part_nodes(part)]
                                       for part in range(ring.partition_count)]
    return out


if __name__ == "__main__":
    from clusters.swift.ring_files import answer

    answer(lambda: _dump(sys.argv[1]))
