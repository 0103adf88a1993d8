"""The lab's cluster-side setup through the monitors: OSD ids, the pools (Faultline's
and RGW's), the mgr prometheus module, and the wait for HEALTH_OK with every PG
active+clean."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from clusters.ceph.admin import CephAdmin, CephState
from clusters.exceptions import ClusterError

from . import disks, netns
from .ceph_layout import (
    CLEAN_POLLS,
    CRUSH_RULE,
    HEALTH_TIMEOUT,
    OSD_COUNT,
    POOL,
    POOL_PGS,
    PROMETHEUS_PORT,
    RGW_POOL_PGS,
    RGW_POOLS,
    CephLab,
)
from .exceptions import LabError


def admin(lab: CephLab, timeout: float = 30.0) -> CephAdmin:
    admin = CephAdmin(str(lab.conf), timeout=timeout)
    admin.connect()
    return admin


def health(conf: Path) -> dict[str, Any]:
    """The cluster's state as `lab status` shows it, or the error that kept it from us."""
    try:
        with CephAdmin(str(conf), timeout=5) as admin:
            return admin.state().as_dict()
    except ClusterError as exc:
        return {"error": str(exc)}


def lab_status(lab: Any, network: netns.LabNetwork, daemons: dict[str, Any], mon_alive: bool
               ) -> dict[str, Any]:
    """What `status` says of a Ceph lab of either release (CephLab, ReefLab): its daemons,
    its OSD disks' mounts, loop devices and namespaces, and the health if the mon runs."""
    return {
        "home": str(lab.home),
        "initialized": bool(lab.read_state().get("initialized")),
        "daemons": daemons,
        "mounts": {str(lab.osd_dir(n)): disks.is_mounted(lab.osd_dir(n))
                   for n in range(OSD_COUNT)},
        "loop_devices": disks.loop_devices_under(lab.home),
        "namespaces": netns.existing_namespaces(network),
        "health": health(lab.conf) if mon_alive else None,
    }


def configure_prometheus(admin: CephAdmin, address: str = "127.0.0.1") -> None:
    """The mgr prometheus module's listening address, port and cache, where the host's
    Prometheus reaches it (the Pacific lab's mgr is on loopback, the Reef lab's in node1)."""
    wanted = {"server_addr": address, "server_port": str(PROMETHEUS_PORT),
              "scrape_interval": "5"}  # the default 15 s cache makes the metrics lag
    current = {(o["section"], o["name"]): o["value"] for o in admin.command("config dump")}
    for name, value in wanted.items():
        key = f"mgr/prometheus/{name}"
        if current.get(("mgr", key)) != value:  # every write waits for a Paxos round
            # force: before the mgr's first report the mon knows no module options
            admin.command("config set", who="mgr", name=key, value=value, force=True)


def disable_balancer(admin: CephAdmin) -> None:
    """The mgr's balancer (upmap, on by default) moves PGs between OSDs whenever their
    counts differ, as after a fault: the moves re-peer PGs and leave objects misplaced in
    the middle of a later run's baseline (it spoiled two CI baselines). A lab that places
    its data once has nothing to balance."""
    current = {(o["section"], o["name"]): o["value"] for o in admin.command("config dump")}
    if current.get(("mgr", "mgr/balancer/active")) != "false":
        admin.command("config set", who="mgr", name="mgr/balancer/active", value="false",
                      force=True)


def ensure_prometheus_enabled(admin: CephAdmin) -> None:
    modules = admin.command("mgr module ls")
    if "prometheus" not in modules.get("enabled_modules", []):
        admin.command("mgr module enable", module="prometheus")  # this restarts the mgr


def create_osd_ids(admin: CephAdmin, state: dict[str, Any]) -> None:
    uuids = state.setdefault("osd_uuids", {})
    for osd in range(OSD_COUNT):
        osd_uuid = uuids.setdefault(str(osd), str(uuid.uuid4()))
        out = admin.command("osd new", uuid=osd_uuid, id=osd)
        got = out.get("osdid") if isinstance(out, dict) else out
        if got != osd:
            raise LabError(f"ceph osd new gave id {got!r}, expected {osd}")


def make_osds(admin: CephAdmin, lab: Any, state: dict[str, Any],
              make: Callable[[int, str], None]) -> None:
    """A new lab's OSDs: their ids from the monitor, then `make(osd, uuid)` for each, all at
    once; the lab's state is written after each step and says `initialized` at the end."""
    create_osd_ids(admin, state)
    lab.write_state(state)
    with ThreadPoolExecutor(max_workers=OSD_COUNT) as pool:
        for future in [pool.submit(make, osd, state["osd_uuids"][str(osd)])
                       for osd in range(OSD_COUNT)]:
            future.result()
    state["initialized"] = True
    lab.write_state(state)


def _together(admin: CephAdmin, commands: list[tuple[str, dict[str, Any]]]) -> None:
    """Send mon commands at once: the monitor folds changes that arrive together into one
    Paxos round, where one by one each waits ~1 s for its own (a cold `up` spent 14 s on
    its 18 pool commands)."""
    if not commands:
        return
    with ThreadPoolExecutor(max_workers=len(commands)) as pool:
        for future in [pool.submit(admin.command, prefix, **args) for prefix, args in commands]:
            future.result()


def ensure_crush_zones(admin: CephAdmin, zone_of_host: dict[str, str]) -> None:
    """Put each host bucket under its zone bucket (lab/zones.py). An OSD's crush_location
    places it only when it is first created, so a lab made before zones existed, or whose
    OSDs came up before the mon knew a zone, is moved here; moving an item where it is
    already changes nothing."""
    tree = admin.command("osd tree")
    buckets = {n["name"]: n for n in tree["nodes"]}
    children = {child for n in tree["nodes"] for child in n.get("children", [])}
    for zone in sorted(set(zone_of_host.values())):
        if zone not in buckets:
            admin.command("osd crush add-bucket", name=zone, type="zone")
        if zone not in buckets or buckets[zone]["id"] not in children:
            admin.command("osd crush move", name=zone, args=["root=default"])
    tree = admin.command("osd tree")
    parent = {child: n["name"] for n in tree["nodes"] for child in n.get("children", [])}
    ids = {n["name"]: n["id"] for n in tree["nodes"]}
    for host, zone in zone_of_host.items():
        if host in ids and parent.get(ids[host]) != zone:
            admin.command("osd crush move", name=host, args=[f"zone={zone}"])


def ensure_crush_rule(admin: CephAdmin) -> int:
    """The replicated rule that puts each copy in another zone (lab/zones.py); its id."""
    rules = {r["rule_name"]: r["rule_id"] for r in admin.command("osd crush rule dump")}
    if CRUSH_RULE not in rules:
        admin.command("osd crush rule create-replicated", name=CRUSH_RULE, root="default",
                      type="zone")
        rules = {r["rule_name"]: r["rule_id"] for r in admin.command("osd crush rule dump")}
    return rules[CRUSH_RULE]


def ensure_pools(admin: CephAdmin, rgw: bool = True) -> None:
    """Faultline's pool and RGW's, size 3 / min_size 2 on the zone rule, each tagged with its
    application.

    RGW's pools are made before RGW runs, so they peer within the one wait for HEALTH_OK
    (RGW would make its bucket pools only at the first bucket, after `up` saw HEALTH_OK),
    and tagged "rgw" as RGW itself does (no POOL_APP_NOT_ENABLED warning). What a killed
    earlier `up` left half done is completed.
    """
    wanted = {POOL: (POOL_PGS, "rados")}
    if rgw:  # a lab without a gateway (lab/ceph_reef.py) peers only its own pool
        wanted.update({p: (RGW_POOL_PGS, "rgw") for p in RGW_POOLS})
    rule = ensure_crush_rule(admin)
    existing = {p["pool_name"]: p for p in admin.command("osd pool ls", detail="detail")}
    _together(admin, [("osd pool create", {"pool": name, "pg_num": pgs, "pgp_num": pgs,
                                           "pool_type": "replicated", "rule": CRUSH_RULE})
                      for name, (pgs, _) in wanted.items() if name not in existing])
    fixes: list[tuple[str, dict[str, Any]]] = []
    for name, (_, app) in wanted.items():
        pool = existing.get(name, {})
        for var, val in (("size", 3), ("min_size", 2), ("crush_rule", rule)):
            if pool.get(var) != val:
                value = CRUSH_RULE if var == "crush_rule" else str(val)
                fixes.append(("osd pool set", {"pool": name, "var": var, "val": value}))
        if app not in pool.get("application_metadata", {}):
            fixes.append(("osd pool application enable", {"pool": name, "app": app}))
    _together(admin, fixes)


def move_other_pools(admin: CephAdmin) -> bool:
    """Put the pools others made (the mgr's device_health_metrics, created once the OSDs are
    up) on the zone rule too: left on the default host rule, one may keep two copies in one
    zone and make the guard refuse a zone-off fault. True if a pool was moved."""
    rule = ensure_crush_rule(admin)
    moves = [("osd pool set", {"pool": p["pool_name"], "var": "crush_rule", "val": CRUSH_RULE})
             for p in admin.command("osd pool ls", detail="detail")
             if p.get("crush_rule") != rule]
    _together(admin, moves)
    return bool(moves)


# Health checks that waiting does not clear: the disks hold objects of earlier runs.
FULL_CHECKS = frozenset({"OSD_NEARFULL", "OSD_BACKFILLFULL", "OSD_FULL", "POOL_NEARFULL",
                         "POOL_BACKFILLFULL", "POOL_FULL"})


def _settled(state: CephState) -> bool:
    full = FULL_CHECKS.intersection(state.checks)
    if full and state.num_pgs > 0 and state.clean_pgs == state.num_pgs:
        raise LabError(
            f"the lab's disks are too full to be healthy ({', '.join(sorted(full))}): they "
            "hold the objects of earlier runs (`faultline clean` removes a run's objects; "
            "`faultline lab down --purge` deletes the whole lab's data)")
    return (state.health == "HEALTH_OK" and state.num_osds == OSD_COUNT
            and state.num_up_osds == OSD_COUNT and state.num_in_osds == OSD_COUNT
            and state.num_pgs > 0 and state.clean_pgs == state.num_pgs)


def wait_healthy(admin: CephAdmin, timeout: float = HEALTH_TIMEOUT) -> CephState:
    """Wait for HEALTH_OK, all OSDs up+in and every PG active+clean, CLEAN_POLLS polls in a row."""
    last, waited = admin.wait_until(_settled, timeout, polls=CLEAN_POLLS)
    if waited is None:
        seen = "no answer from the monitor" if last is None else last.summary()
        raise LabError(
            f"waited {timeout:.0f} s for HEALTH_OK with {OSD_COUNT} OSDs up+in and all PGs "
            f"active+clean on {CLEAN_POLLS} polls in a row; last seen: {seen}")
    return last


def settle(admin: CephAdmin, timeout: float = HEALTH_TIMEOUT) -> CephState:
    """Wait for HEALTH_OK, move the pools others made onto the zone rule, and wait again if
    one was moved; the settled state."""
    final = wait_healthy(admin, timeout)
    if move_other_pools(admin):
        final = wait_healthy(admin, timeout)
    return final
