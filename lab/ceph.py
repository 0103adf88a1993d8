"""The Ceph lab: a real Ceph 16 cluster on this machine, written into the inventory.

Layout: mon.a and mgr.x in the root namespace on the bridge address 10.77.0.1;
four BlueStore OSDs, osd.N on CRUSH host node(N+1) inside namespace
flceph(N+1) at 10.77.0.(11+N), each on its own loop-mounted 6 GiB XFS image
whose `block` file BlueStore creates itself; one RADOS Gateway (client.rgw.lab,
service `rgw.lab`) in the root namespace serving the Swift API and S3 on
127.0.0.1:7480 only (lab/ceph_rgw.py: its user, key files and smoke test).
cephx is off everywhere, so there is no keyring at all. Each node runs an sshd,
and the OSDs are started over SSH with the very command the inventory records,
so that command is known to work for the actions that restart an OSD later.

`up` copes with whatever a killed earlier lab left (mounts, loop devices,
namespaces, pid files of dead daemons); `down` leaves nothing on the machine.

    python -m lab.ceph up | down [--purge] | status
"""

from __future__ import annotations

import logging
import shutil
import subprocess
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from clusters.access import inventory
from clusters.ceph.admin import CephAdmin
from clusters.paths import default_inventory

from . import ceph_rgw, ceph_setup, disks, memcg, netns, procs, script, sshd, teardown, zones
from .ceph_layout import (
    CLUSTER_NAME,
    HEALTH_TIMEOUT,
    MGR_ID,
    MON_ADDRESS,
    MON_ID,
    NETWORK,
    NODE_MEMORY_MIB,
    OSD_COUNT,
    POOL,
    PROMETHEUS_URL,
    RGW_DAEMON,
    CephLab,
    lab_at,
    program_of,
    write_conf,
)
from .exceptions import LabError

log = logging.getLogger(__name__)


# -- daemons ---------------------------------------------------------------------------


def _ceph_daemons() -> list[str]:
    return [f"mon.{MON_ID}", f"mgr.{MGR_ID}", *(f"osd.{n}" for n in range(OSD_COUNT)),
            RGW_DAEMON]


def _start_local(lab: CephLab, daemon: str) -> int:
    argv = ["sh", "-c", lab.start_command(daemon)]
    return procs.start_daemon(argv, lab.pid_file(daemon), lab.log_dir / f"{daemon}.stdout",
                              program=program_of(daemon), timeout=60)


def _start_osd(lab: CephLab, osd: int) -> int:
    """Mount the OSD's disk here, then start it on its node over SSH (the inventory's way)."""
    daemon = f"osd.{osd}"
    pid = procs.alive_pid(lab.pid_file(daemon), "ceph-osd")
    if pid is not None:
        return pid
    _fresh_mount(lab, osd)
    node = lab.node_of(osd)
    argv = [*sshd.ssh_argv(node, lab.ssh), memcg.born_in(node, lab.start_command(daemon))]
    return procs.start_daemon(argv, lab.pid_file(daemon), lab.log_dir / f"{daemon}.launch.log",
                              program="ceph-osd", timeout=120)


def _fresh_mount(lab: CephLab, osd: int) -> None:
    """Mount the OSD's image anew: a leftover mount may hold a shut-down (dead) XFS."""
    mount_point = lab.osd_dir(osd)
    disks.unmount(mount_point)
    disks.detach_loops(lab.image(osd))  # else mount -o loop may reuse a stale device
    disks.mount_image(lab.image(osd), mount_point)


def _outside(lab: CephLab, osd: int) -> bool:
    pid = procs.alive_pid(lab.pid_file(f"osd.{osd}"), "ceph-osd")
    return pid is not None and memcg.outside(lab.node_of(osd), pid)


def _mkfs_osd(lab: CephLab, osd: int, osd_uuid: str) -> None:
    disks.create_image(lab.image(osd))
    disks.mount_image(lab.image(osd), lab.osd_dir(osd))
    node = lab.node_of(osd)
    # in the node's namespace: its public_addr exists only there
    argv = [*netns.nsenter_argv(node.netns), "ceph-osd", "-c", str(lab.conf), "-i", str(osd),
            "--mkfs", "--osd-uuid", osd_uuid]
    with open(lab.log_dir / f"osd.{osd}.mkfs.log", "ab") as out:
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                              preexec_fn=procs.no_core_dumps, timeout=300)
    if done.returncode != 0:
        raise LabError(f"ceph-osd --mkfs of osd.{osd} failed (see {out.name})")


def _stop_targets(lab: CephLab, daemons: list[str]) -> dict[Path, str | None]:
    return {lab.pid_file(d): program_of(d) for d in daemons}


# -- inventory -------------------------------------------------------------------------


def inventory_spec(lab: CephLab) -> dict[str, Any]:
    """The lab as a cluster of the inventory (schema: clusters/access/inventory.py)."""
    ssh = lab.ssh
    nodes = lab.nodes
    services: list[dict[str, Any]] = [
        {"name": f"osd.{osd}", "kind": "osd", "node": lab.node_of(osd).name,
         "pid_file": str(lab.pid_file(f"osd.{osd}")),
         "start": memcg.born_in(lab.node_of(osd), lab.start_command(f"osd.{osd}"))}
        for osd in range(OSD_COUNT)]
    # no node: they run on this machine, in the root namespace
    for daemon in (f"mon.{MON_ID}", f"mgr.{MGR_ID}", RGW_DAEMON):
        services.append({"name": daemon, "kind": daemon.split(".")[0], "node": None,
                         "pid_file": str(lab.pid_file(daemon)),
                         "start": lab.start_command(daemon)})
    return {
        "kind": "ceph",
        "lab": True,
        "chaos": "allowed",  # a lab is made to take faults (clusters/safety/protection.py)
        "release": "pacific",
        "ssh": {"user": "root", "port": sshd.PORT, "key_file": str(ssh.client_key),
                "known_hosts": str(ssh.known_hosts), "verify_host_keys": True},
        "nodes": [{"name": n.name, "address": n.address,
                   "zone": zones.zone_name(n.index), "netns": n.netns,
                   "memory_cgroup": str(memcg.cgroup_of(n))} for n in nodes],
        "disks": [{"node": lab.node_of(osd).name, "device": str(lab.image(osd)),
                   "mount": str(lab.osd_dir(osd)), "osd": osd} for osd in range(OSD_COUNT)],
        "services": services,
        "client": {"conf": str(lab.conf), "keyring": None, "pool": POOL,
                   "prometheus": PROMETHEUS_URL, **ceph_rgw.client_spec(lab)},
        # where an OSD that actions.ceph_scale adds goes (clusters/ceph/new_osd.py): beside
        # the lab's own, so the lab grows by one and shrinks back without a rebuild
        "scale": {"ceph_osd": {"image": str(lab.home / "disks" / "osd{id}.img"),
                               "mount": str(lab.home / "osd" / "ceph-{id}"),
                               "pid_file": str(lab.run_dir / "ceph-osd.{id}.pid"),
                               "log": str(lab.log_dir / "osd.{id}.stdout")}},
    }


# -- up / down / status ----------------------------------------------------------------


def _clear_leftovers(lab: CephLab) -> None:
    """Forget pid files of dead daemons (a killed lab's), so nothing trusts them."""
    for daemon in _ceph_daemons():
        procs.remove_stale(lab.pid_file(daemon), program_of(daemon))
    for node in lab.nodes:
        procs.remove_stale(lab.ssh.pid_file(node), "sshd")


def _wipe_partial(lab: CephLab) -> None:
    """An initialisation that never finished: stop what it started and start over."""
    procs.stop_many(_stop_targets(lab, _ceph_daemons()))
    teardown.release_disks(lab.home)
    if disks.mounts_under(lab.home):  # never delete through a live mount
        raise LabError(f"cannot wipe {lab.home}: still mounted: {disks.mounts_under(lab.home)}")
    for name in ("mon", "mgr", "osd", "disks", "crash", "rgw"):
        shutil.rmtree(lab.home / name, ignore_errors=True)
    for name in ("monmap", "lab.json", "ceph.conf"):
        (lab.home / name).unlink(missing_ok=True)


def _initialise(lab: CephLab, admin_timeout: float) -> CephAdmin:
    """Cold start: a new cluster from nothing. Returns a connected admin."""
    fsid = str(uuid.uuid4())
    state: dict[str, Any] = {"fsid": fsid, "initialized": False}
    lab.write_state(state)
    write_conf(lab, fsid)
    monmap = lab.home / "monmap"
    subprocess.run(["monmaptool", "--create", "--clobber", "--fsid", fsid, "--addv", MON_ID,
                    f"[v2:{MON_ADDRESS}:3300,v1:{MON_ADDRESS}:6789]", str(monmap)],
                   check=True, capture_output=True)
    (lab.home / "mon" / f"ceph-{MON_ID}").mkdir(parents=True, exist_ok=True)
    subprocess.run(["ceph-mon", "-c", str(lab.conf), "--mkfs", "-i", MON_ID, "--monmap",
                    str(monmap)], check=True, capture_output=True, preexec_fn=procs.no_core_dumps)
    _start_local(lab, f"mon.{MON_ID}")
    admin = ceph_setup.admin(lab, admin_timeout)
    ceph_setup.configure_prometheus(admin)  # before the mgr's first start: no restart later
    ceph_setup.disable_balancer(admin)
    (lab.home / "mgr" / f"ceph-{MGR_ID}").mkdir(parents=True, exist_ok=True)
    _start_local(lab, f"mgr.{MGR_ID}")
    ceph_setup.make_osds(admin, lab, state,
                         lambda osd, osd_uuid: _mkfs_osd(lab, osd, osd_uuid))
    return admin


def up(home: Path | None = None, timeout: float = HEALTH_TIMEOUT) -> dict[str, Any]:
    """Bring the Ceph lab up (cold: create it; warm: restart what is not running).

    The result's "mode" is "cold", "warm" or "running" (everything was up already).

    Returns timing info once the cluster is HEALTH_OK with every OSD up+in and every
    PG active+clean (RGW's pools included) and RGW has served a Swift API round trip
    with the lab user's key; raises LabError saying what it waited for otherwise.
    """
    lab = lab_at(home)
    started = time.monotonic()
    for directory in (lab.home, lab.run_dir, lab.log_dir, lab.home / "crash"):
        directory.mkdir(parents=True, exist_ok=True)
    _clear_leftovers(lab)
    state = lab.read_state()
    mode = "warm" if state.get("initialized") else "cold"
    if mode == "warm" and all(procs.alive_pid(lab.pid_file(d), program_of(d))
                              for d in _ceph_daemons()):
        mode = "running"  # nothing to start: only check health and the inventory
    if mode == "cold":
        _wipe_partial(lab)

    netns.create_network(NETWORK, lab.nodes)
    sshd.prepare(lab.nodes, lab.ssh)
    with ThreadPoolExecutor(max_workers=OSD_COUNT) as pool:
        list(pool.map(lambda node: sshd.start(node, lab.ssh), lab.nodes))
    for node in lab.nodes:
        memcg.confine(node, NODE_MEMORY_MIB)
    # an OSD started before its node had a memory cgroup: restarted below, born inside
    procs.stop_many({lab.pid_file(f"osd.{osd}"): "ceph-osd" for osd in range(OSD_COUNT)
                     if _outside(lab, osd)})

    if mode == "cold":
        log.info("initialising a new Ceph lab in %s", lab.home)
        admin = _initialise(lab, admin_timeout=30.0)
    else:
        write_conf(lab, state["fsid"])  # the layout may have changed since the last up
        _start_local(lab, f"mon.{MON_ID}")
        admin = ceph_setup.admin(lab)
        _start_local(lab, f"mgr.{MGR_ID}")
    try:
        # OSDs start in parallel: each replays its BlueStore WAL for a few seconds
        with ThreadPoolExecutor(max_workers=OSD_COUNT) as pool:
            list(pool.map(lambda osd: _start_osd(lab, osd), range(OSD_COUNT)))
        ceph_setup.ensure_crush_zones(admin, {n.name: zones.zone_name(n.index)
                                              for n in lab.nodes})
        ceph_setup.ensure_pools(admin)
        ceph_setup.configure_prometheus(admin)
        ceph_setup.disable_balancer(admin)  # a lab made before this too
        ceph_setup.ensure_prometheus_enabled(admin)
        daemons_started = time.monotonic()
        log.info("daemons running after %.1f s; waiting for HEALTH_OK", daemons_started - started)
        final = ceph_setup.settle(admin, timeout)
    finally:
        admin.close()
    healthy = time.monotonic()
    # RGW only now: started while PGs peer, its first read may go to an OSD that drops it
    # on the next map change, and RGW resends only when the op is 10 s late (+7 s to `up`)
    lab.rgw_dir.mkdir(mode=0o700, exist_ok=True)
    _start_local(lab, RGW_DAEMON)
    ceph_rgw.wait_answering()
    ceph_rgw.ensure_user(lab)
    ceph_rgw.wait_serving(lab)
    serving = time.monotonic()
    log.info("HEALTH_OK after %.1f s, RGW serving the Swift API after %.1f s",
             healthy - started, serving - started)
    inventory.write_cluster(default_inventory(), CLUSTER_NAME, inventory_spec(lab))
    return {
        "mode": mode,
        "home": str(lab.home),
        "seconds_to_daemons": round(daemons_started - started, 1),
        "seconds_to_health_ok": round(healthy - started, 1),
        "seconds_to_rgw": round(serving - started, 1),
        "inventory": str(default_inventory()),
        "cluster": CLUSTER_NAME,
        "state": final.as_dict(),
    }


def leftovers(home: Path | None = None) -> dict[str, list]:
    """What of the lab is still on the machine (lab.teardown.leftovers)."""
    lab = lab_at(home)
    pid_files = [lab.pid_file(d) for d in [*_ceph_daemons(), *_added_osds(lab)]] + [
        lab.ssh.pid_file(n) for n in lab.nodes]
    return {**teardown.leftovers(lab.home, NETWORK, pid_files),
            "memory_cgroups": memcg.leftovers(lab.nodes),
            "added_osd_disks": [str(lab.image(osd)) for osd in lab.added_osds()
                                if lab.image(osd).exists()]}


def _added_osds(lab: CephLab) -> list[str]:
    return [f"osd.{osd}" for osd in lab.added_osds()]


def _delete_added_disks(lab: CephLab) -> None:
    """The disks of OSDs scale added and no restore removed (unmounted by then)."""
    for osd in lab.added_osds():
        lab.image(osd).unlink(missing_ok=True)
        if lab.osd_dir(osd).is_dir() and not disks.is_mounted(lab.osd_dir(osd)):
            shutil.rmtree(lab.osd_dir(osd), ignore_errors=True)


def down(home: Path | None = None, purge: bool = False) -> dict[str, Any]:
    """Stop the lab and remove it from the machine; `purge` also deletes its data."""
    lab = lab_at(home)
    started = time.monotonic()
    # first, so nobody picks a dying lab from the inventory
    inventory.remove_cluster(default_inventory(), CLUSTER_NAME)
    # with any OSD scale added that was never removed: it holds its node's memory cgroup
    osds = [f"osd.{n}" for n in range(OSD_COUNT)] + _added_osds(lab)
    # RGW first, while the OSDs still answer: it unwatches its control objects on the way
    # out (~0.2 s). Killed, or stopped beside the OSDs (it then hangs until SIGKILL), it
    # leaves watches that stall every bucket creation of the next RGW for 30 s.
    stopped = procs.stop_many(_stop_targets(lab, [RGW_DAEMON]))
    # OSDs before the mon: a stopping OSD tells the mon it goes down (and waits for it)
    stopped |= procs.stop_many({**_stop_targets(lab, osds),
                                **sshd.stop_targets(lab.nodes, lab.ssh)})
    stopped |= procs.stop_many(_stop_targets(lab, [f"mon.{MON_ID}", f"mgr.{MGR_ID}"]))
    memcg.release(lab.nodes)
    stray = teardown.remove(lab.home, NETWORK, purge)
    _delete_added_disks(lab)
    left = leftovers(home)
    if stray:
        # started by someone else in our namespaces; we only signal PIDs of our pid files
        left["namespace_processes"] = stray
    return {"seconds": round(time.monotonic() - started, 1), "stopped": stopped,
            "purged": purge, "leftovers": left}


def status(home: Path | None = None) -> dict[str, Any]:
    """Each daemon's pid/alive/rss, the disks' mounts, and the health if the mon runs."""
    lab = lab_at(home)
    daemons: dict[str, Any] = {}
    named = [(d, lab.pid_file(d), program_of(d)) for d in _ceph_daemons()]
    named += [(f"sshd.{n.name}", lab.ssh.pid_file(n), "sshd") for n in lab.nodes]
    for name, pid_file, program in named:
        pid = procs.read_pid(pid_file)
        alive = pid is not None and procs.is_alive(pid, program)
        daemons[name] = {"pid": pid, "alive": alive,
                         "rss_bytes": procs.rss_bytes(pid) if alive and pid else None}
    return ceph_setup.lab_status(lab, NETWORK, daemons, daemons[f"mon.{MON_ID}"]["alive"])


def main(argv: list[str] | None = None) -> int:
    return script.main("ceph", up, down, status, argv)


if __name__ == "__main__":
    sys.exit(main())
