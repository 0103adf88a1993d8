"""The monitor's side of adding and removing an OSD: its id and uuid, waiting until it is
up and in at its place in CRUSH, the drain (out, then every PG active+clean with nothing
misplaced or degraded), and the purge. Every wait is bounded and says what it waited for."""

from __future__ import annotations

import time
from typing import Any

from clusters.ceph.admin import CephAdmin, CephState
from clusters.exceptions import AdminCommandFailed


def osd_ids(admin: CephAdmin) -> set[int]:
    return {o["osd"] for o in admin.command("osd dump")["osds"]}


def next_osd_id(admin: CephAdmin) -> int:
    """The lowest id no OSD has (what `osd new` would give)."""
    taken = osd_ids(admin)
    return next(n for n in range(len(taken) + 1) if n not in taken)


def create(admin: CephAdmin, osd_id: int, uuid: str) -> None:
    """`osd new` with that id and uuid (idempotent for the same pair)."""
    out = admin.command("osd new", uuid=uuid, id=osd_id)
    got = out.get("osdid") if isinstance(out, dict) else out
    if got != osd_id:
        raise AdminCommandFailed(f"ceph osd new gave id {got!r}, expected {osd_id}")


def _osd(admin: CephAdmin, osd_id: int) -> dict[str, Any] | None:
    return next((o for o in admin.command("osd dump")["osds"] if o["osd"] == osd_id), None)


def host_of(admin: CephAdmin, osd_id: int) -> str | None:
    """The CRUSH host bucket the OSD sits in."""
    tree = admin.command("osd tree")["nodes"]
    return next((n["name"] for n in tree if n.get("type") == "host"
                 and osd_id in n.get("children", [])), None)


def wait_up_in(admin: CephAdmin, osd_id: int, host: str, timeout_s: float) -> float:
    """Seconds until the OSD was up, in, and under its host in CRUSH."""
    started = time.monotonic()
    seen: dict[str, Any] | None = None
    while time.monotonic() - started < timeout_s:
        seen = _osd(admin, osd_id)
        if seen and seen["up"] and seen["in"] and host_of(admin, osd_id) == host:
            return round(time.monotonic() - started, 2)
        time.sleep(1.0)
    state = "not in the osdmap" if seen is None else (
        f"up={seen['up']} in={seen['in']} host={host_of(admin, osd_id)}")
    raise AdminCommandFailed(f"osd.{osd_id} not up and in under host {host} after "
                             f"{timeout_s:.0f} s ({state})")


def settled(state: CephState) -> bool:
    """No data moving: every PG active+clean, nothing misplaced or degraded."""
    return (state.num_pgs > 0 and state.clean_pgs == state.num_pgs
            and state.misplaced_objects == 0 and state.degraded_objects == 0)


def pgs_on(admin: CephAdmin, osd_id: int) -> int:
    """PGs whose up or acting set still holds the OSD (the mgr's `pg ls-by-osd`)."""
    out = admin.mgr_command("pg ls-by-osd", osd=osd_id)
    return len(out.get("pg_stats") or [] if isinstance(out, dict) else out or [])


def drain(admin: CephAdmin, osd_id: int, timeout_s: float, hold_s: float = 5.0) -> float:
    """Take the OSD's CRUSH weight to 0, mark it out, and wait until it holds no PG and no
    data moves, on every poll for hold_s (right after a map change every PG may look clean
    for a few seconds, before peering starts); the seconds it took. Raises
    AdminCommandFailed on timeout (the OSD stays out, still running: a second drain resumes
    the wait)."""
    # its CRUSH weight to 0 as well as out: its host then weighs what it will weigh once
    # it is purged, so the purge moves nothing (out alone keeps the host's weight, and the
    # purge that lowers it moves a second share of the zone's copies, degraded meanwhile:
    # seen on the lab, 5,934 objects for 27 s)
    if host_of(admin, osd_id) is not None:
        admin.command("osd crush reweight", name=f"osd.{osd_id}", weight=0.0)
    admin.command("osd out", ids=[str(osd_id)])
    started = time.monotonic()
    since: float | None = None
    state, held = None, 0
    while time.monotonic() - started < timeout_s:
        state, left = admin.state(), pgs_on(admin, osd_id)
        now = time.monotonic()
        if settled(state) and left == 0:
            since, held = since or now, held + 1
            if held >= 5 and now - since >= hold_s:
                return round(since - started, 2)
        else:
            since, held = None, 0
        time.sleep(1.0)
    seen = "nothing" if state is None else (
        f"{state.summary()}, {state.misplaced_objects} misplaced objects, {left} PGs on it")
    raise AdminCommandFailed(f"osd.{osd_id} not drained after {timeout_s:.0f} s (last seen: "
                             f"{seen}); it stays out: remove it again to go on")


def purge(admin: CephAdmin, osd_id: int) -> bool:
    """Remove the OSD from the osdmap, CRUSH and auth (the mgr's `osd purge`, which first
    checks it is safe to destroy); False if it was not there."""
    if osd_id not in osd_ids(admin):
        return False
    admin.mgr_command("osd purge", id=osd_id, yes_i_really_mean_it=True)
    return True
