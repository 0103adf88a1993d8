"""A Ceph admin client over python-rados `mon_command` (JSON in, JSON out).

No CLI text is parsed: every figure comes from the monitors' JSON replies.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import rados

from clusters.access.inventory import Cluster
from clusters.exceptions import AdminCommandFailed, InventoryError, NodeUnreachable

# flags that may sit beside active+clean without any copy missing or out of place
REDUNDANCY_NEUTRAL = frozenset({"laggy", "wait", "scrubbing", "deep", "snaptrim",
                                "snaptrim_wait"})


def is_clean(state: str) -> bool:
    flags = set(state.split("+"))
    return {"active", "clean"} <= flags and flags - {"active", "clean"} <= REDUNDANCY_NEUTRAL


@dataclass(frozen=True)
class CephState:
    """One look at the cluster: what the control samples every second."""

    health: str
    checks: tuple[str, ...]
    num_osds: int
    num_up_osds: int
    num_in_osds: int
    num_pgs: int
    pgs_by_state: dict[str, int]
    degraded_objects: int
    misplaced_objects: int

    @property
    def clean_pgs(self) -> int:
        """PGs active+clean, also while a transient flag that costs no copy is on them
        (laggy: a read lease ran out on a busy machine; scrubbing; waiting)."""
        return sum(n for state, n in self.pgs_by_state.items() if is_clean(state))

    @property
    def fully_redundant(self) -> bool:
        """HEALTH_OK, every PG active+clean and no degraded object."""
        return (self.health == "HEALTH_OK" and self.num_pgs > 0
                and self.clean_pgs == self.num_pgs and self.degraded_objects == 0)

    @property
    def fault_seen(self) -> bool:
        """The cluster itself reports a failed OSD (down in the osdmap, or a health check)."""
        return self.num_up_osds < self.num_osds or "OSD_DOWN" in self.checks

    @property
    def at_risk(self) -> bool:
        """Some object is known to be below its replica count."""
        return self.degraded_objects > 0 or any(
            "degraded" in s or "undersized" in s for s in self.pgs_by_state)

    def summary(self) -> str:
        checks = f" ({', '.join(self.checks)})" if self.checks else ""
        return (f"{self.health}{checks}, {self.num_up_osds}/{self.num_osds} OSDs up, "
                f"{self.num_in_osds} in, {self.clean_pgs}/{self.num_pgs} PGs active+clean, "
                f"{self.degraded_objects} degraded objects")

    def as_dict(self) -> dict[str, Any]:
        return {
            "health": self.health, "checks": list(self.checks), "num_osds": self.num_osds,
            "num_up_osds": self.num_up_osds, "num_in_osds": self.num_in_osds,
            "num_pgs": self.num_pgs, "pgs_by_state": self.pgs_by_state,
            "degraded_objects": self.degraded_objects,
            "misplaced_objects": self.misplaced_objects,
            "fully_redundant": self.fully_redundant, "fault_seen": self.fault_seen,
            "at_risk": self.at_risk, "down": self.num_osds - self.num_up_osds,
            "summary": self.summary(),
        }


def parse_status(status: dict[str, Any]) -> CephState:
    """Turn the mon's `status` JSON into a CephState (pure; unit-tested)."""
    osdmap = status.get("osdmap", {})
    osdmap = osdmap.get("osdmap", osdmap)  # older releases nest it once more
    pgmap = status.get("pgmap", {})
    return CephState(
        health=status.get("health", {}).get("status", "UNKNOWN"),
        checks=tuple(sorted(status.get("health", {}).get("checks", {}))),
        num_osds=int(osdmap.get("num_osds", 0)),
        num_up_osds=int(osdmap.get("num_up_osds", 0)),
        num_in_osds=int(osdmap.get("num_in_osds", 0)),
        num_pgs=int(pgmap.get("num_pgs", 0)),
        pgs_by_state={s["state_name"]: int(s["count"]) for s in pgmap.get("pgs_by_state", [])},
        degraded_objects=int(pgmap.get("degraded_objects", 0)),
        misplaced_objects=int(pgmap.get("misplaced_objects", 0)),
    )


class CephAdmin:
    """A connected rados handle for admin queries. Use as a context manager."""

    def __init__(self, conf: str | None, keyring: str | None = None, timeout: float = 10.0,
                 mon_host: str | None = None, client_id: str | None = None,
                 bounded_connect: bool = False):
        """`conf` is a ceph.conf path; without one, `mon_host` says where the monitors are
        (inventory discovery starts from a monitor address and a keyring). With
        `bounded_connect`, connecting to monitors that never answer fails after `timeout`
        instead of librados' 300 s (client_mount_timeout)."""
        options = {"rados_mon_op_timeout": str(int(timeout)),
                   "rados_osd_op_timeout": str(int(timeout))}
        if bounded_connect:
            options["client_mount_timeout"] = str(int(timeout))
        if keyring:
            options["keyring"] = keyring
        if mon_host:
            options["mon_host"] = mon_host
        self.timeout = timeout
        self.conf = conf or str(mon_host)  # named in the "cannot reach" message
        # conffile=None reads no file at all ("" would search /etc/ceph)
        try:
            self._rados = rados.Rados(conffile=conf, conf=options, rados_id=client_id)
        except rados.Error as exc:  # a ceph.conf librados cannot parse, a bad option
            raise InventoryError(f"cannot read {self.conf} (the Ceph client configuration): "
                                 f"{exc}") from None

    @classmethod
    def for_cluster(cls, cluster: Cluster, timeout: float = 10.0) -> CephAdmin:
        return cls(cluster.client["conf"], cluster.client.get("keyring"), timeout=timeout)

    def __enter__(self) -> CephAdmin:
        self.connect()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def connect(self) -> None:
        try:
            self._rados.connect(timeout=int(self.timeout))
        except rados.Error as exc:
            raise NodeUnreachable(
                f"cannot reach the Ceph monitors of {self.conf}: {exc}") from None

    def close(self) -> None:
        self._rados.shutdown()

    @property
    def rados(self) -> rados.Rados:
        return self._rados

    def command(self, prefix: str, **args: Any) -> Any:
        """Run a mon command and return its decoded JSON output (or None if empty)."""
        return self._ask(self._rados.mon_command, f"ceph {prefix}", prefix, args)

    def mgr_command(self, prefix: str, **args: Any) -> Any:
        """Run a mgr command (e.g. `pg dump`) and return its decoded JSON output (or None)."""
        return self._ask(self._rados.mgr_command, f"ceph {prefix} (mgr)", prefix, args)

    def _ask(self, send: Callable, what: str, prefix: str, args: dict[str, Any]) -> Any:
        cmd = {"prefix": prefix, "format": "json", **args}
        try:
            ret, out, err = send(json.dumps(cmd), b"", timeout=int(self.timeout))
        except rados.Error as exc:
            raise AdminCommandFailed(f"{what}: {exc}") from None
        if ret != 0:
            raise AdminCommandFailed(f"{what} failed ({ret}): {err.strip()}")
        return json.loads(out) if out.strip() else None

    def status(self) -> dict[str, Any]:
        return self.command("status")

    def state(self) -> CephState:
        return parse_status(self.status())

    def wait_until(self, condition: Callable[[CephState], bool], timeout_s: float,
                   hold_s: float = 0.0, polls: int = 1,
                   interval_s: float = 1.0) -> tuple[CephState | None, float | None]:
        """Poll the state until condition has held on `polls` polls in a row spanning at
        least hold_s (Ceph shows every PG clean for a few seconds after an OSD boots, before
        peering starts). Return the last state and the seconds waited, or None for those
        seconds on timeout. A poll the monitors do not answer breaks the run."""
        started = time.monotonic()
        last: CephState | None = None
        since: float | None = None
        count = 0
        while time.monotonic() - started < timeout_s:
            try:
                last = self.state()
            except AdminCommandFailed:
                last = None
            now = time.monotonic()
            if last is not None and condition(last):
                since, count = (now if since is None else since), count + 1
                if count >= polls and now - since >= hold_s:
                    return last, round(now - started, 2)
            else:
                since, count = None, 0
            time.sleep(interval_s)
        return last, None

    def health(self) -> str:
        return self.command("health")["status"]

    def osd_tree(self) -> dict[str, Any]:
        return self.command("osd tree")

    def osd_up(self, osd_id: int) -> bool:
        dump = self.command("osd dump")
        for osd in dump["osds"]:
            if osd["osd"] == osd_id:
                return bool(osd["up"])
        raise AdminCommandFailed(f"osd.{osd_id} does not exist")

    def pool_exists(self, pool: str) -> bool:
        return self._rados.pool_exists(pool)
