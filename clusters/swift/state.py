"""What the Swift admin client reports (clusters/swift/admin.py): the dispersion report's
copies, each storage node's recon, and the cluster's state made of them. Pure."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Dispersion:
    """One dispersion report: copies found of the sampled objects and containers."""

    object_found: int
    object_expected: int
    container_found: int
    container_expected: int
    object_missing: dict[int, int] = field(default_factory=dict)  # copies missing -> objects
    ts: float = 0.0

    @property
    def object_pct(self) -> float:
        return 100.0 * self.object_found / self.object_expected if self.object_expected else 0.0

    @property
    def complete(self) -> bool:
        return (self.object_expected > 0 and self.object_found == self.object_expected
                and self.container_found == self.container_expected)

    def as_dict(self) -> dict[str, Any]:
        return {"object_copies_found": self.object_found,
                "object_copies_expected": self.object_expected,
                "object_pct": round(self.object_pct, 2),
                "container_copies_found": self.container_found,
                "container_copies_expected": self.container_expected,
                "objects_missing_one": self.object_missing.get(1, 0),
                "objects_missing_two": self.object_missing.get(2, 0),
                "objects_missing_all": self.object_missing.get(3, 0),
                "ts": self.ts}


def parse_dispersion(raw: dict[str, Any], ts: float = 0.0) -> Dispersion:
    """Turn `swift-dispersion-report -j` output into a Dispersion (pure)."""
    obj, cont = raw.get("object") or {}, raw.get("container") or {}
    missing = {int(k.split("_")[1]): int(v) for k, v in obj.items()
               if k.startswith("missing_") and k != "missing_0"}
    return Dispersion(object_found=int(obj.get("copies_found", 0)),
                      object_expected=int(obj.get("copies_expected", 0)),
                      container_found=int(cont.get("copies_found", 0)),
                      container_expected=int(cont.get("copies_expected", 0)),
                      object_missing=missing, ts=ts)


@dataclass(frozen=True)
class NodeRecon:
    """What one storage node's recon and healthchecks said."""

    node: str
    servers_up: dict[str, bool]  # server type -> answers its healthcheck
    unmounted: tuple[str, ...] = ()
    replication_last: float | None = None  # end of the last object replication pass
    replication_seconds: float | None = None  # its length
    async_pending: int | None = None
    disk_usage: dict[str, float] = field(default_factory=dict)  # device -> fraction used

    @property
    def reachable(self) -> bool:
        return any(self.servers_up.values())

    @property
    def replication_pass_started(self) -> float | None:
        if self.replication_last is None or self.replication_seconds is None:
            return None
        return self.replication_last - self.replication_seconds


@dataclass(frozen=True)
class SwiftState:
    """One look at the cluster: what the control samples every second."""

    nodes: tuple[NodeRecon, ...]
    handoffs: dict[str, int] | None  # node -> handoff partitions (None: unknown)
    dispersion: Dispersion | None
    proxy_up: bool = True

    @property
    def servers_down(self) -> list[str]:
        down = [] if self.proxy_up else ["proxy-server"]
        return down + [f"{t}-server.{n.node}" for n in self.nodes
                       for t, up in n.servers_up.items() if not up]

    @property
    def unmounted(self) -> list[str]:
        return [f"{n.node}/{d}" for n in self.nodes for d in n.unmounted]

    @property
    def fault_seen(self) -> bool:
        """Swift itself shows the fault: a server does not answer, a device is unmounted."""
        return bool(self.servers_down or self.unmounted)

    @property
    def handoff_partitions(self) -> int | None:
        return None if self.handoffs is None else sum(self.handoffs.values())

    @property
    def fully_redundant(self) -> bool:
        """Every server answers, every sampled copy is where the ring wants it, and no
        partition of any ring is left on a handoff. Swift never rebuilds a down server's
        replicas elsewhere, so this cannot hold while a server is down (accounts and
        containers are not in the dispersion sample, but their servers are checked)."""
        return (not self.fault_seen and self.dispersion is not None
                and self.dispersion.complete and self.handoff_partitions == 0)

    @property
    def at_risk(self) -> bool | None:
        """Some sampled object or container is below its replica count (None: no report)."""
        return None if self.dispersion is None else not self.dispersion.complete

    @property
    def oldest_pass_start(self) -> float | None:
        """Start of the oldest of the nodes' last completed object replication passes."""
        starts = [n.replication_pass_started for n in self.nodes]
        return None if not starts or None in starts else min(starts)

    @property
    def health(self) -> str:
        if self.fault_seen:
            return "FAULT"
        return "HEALTHY" if self.fully_redundant else "RECOVERING"

    def summary(self) -> str:
        disp = (f"dispersion {self.dispersion.object_pct:.1f}%" if self.dispersion
                else "dispersion unknown")
        down = ", ".join(self.servers_down + self.unmounted) or "all servers up"
        return f"{self.health}: {down}, {disp}, handoff partitions {self.handoff_partitions}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "health": self.health, "servers_down": self.servers_down,
            "unmounted": self.unmounted, "handoffs": self.handoffs,
            "handoff_partitions": self.handoff_partitions,
            "dispersion": self.dispersion.as_dict() if self.dispersion else None,
            "replication_last": {n.node: n.replication_last for n in self.nodes},
            "replication_pass_started": {n.node: n.replication_pass_started
                                         for n in self.nodes},
            "oldest_pass_start": self.oldest_pass_start,
            "async_pending": sum(n.async_pending or 0 for n in self.nodes),
            "disk_usage": {f"{n.node}/{dev}": used for n in self.nodes
                           for dev, used in n.disk_usage.items()},
            "down": len(self.servers_down) + len(self.unmounted),
            "fault_seen": self.fault_seen, "fully_redundant": self.fully_redundant,
            "at_risk": self.at_risk, "summary": self.summary(),
        }
