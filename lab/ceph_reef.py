"""The production-like Ceph lab: Ceph 18 (Reef) from Debian 13, its daemons under Debian's
own systemd units, written into the inventory as `lab-ceph-reef`.

Nodes are containers booting systemd (lab/nspawn.py) over one cached Debian 13 root
(lab/rootfs.py), each in a network namespace of this lab (lab/netns.py: bridge `flbr2`,
node K `flreefK` at 10.79.0.(10+K)), reached over its own sshd as remote machines are:

    node1 (zone1): ceph-mon@a, ceph-mgr@x, ceph-osd@0     node3 (zone2): ceph-osd@2
    node2 (zone1): ceph-osd@1                              node4 (zone3): ceph-osd@3

The units keep their stock `Restart=on-failure`, `RestartSec=10` (so a SIGKILLed daemon
comes back by itself after ~10 s, as on a package-installed server) and are enabled, so a
warm start is just booting the nodes. OSD disks are loop-mounted XFS images on the host
(lab/disks.py), bound into their node at /var/lib/ceph/osd/ceph-N; BlueStore makes its
`block` file in them. The monitor's store lives in node1's overlay. One ceph.conf (cephx
off, the Pacific lab's tuning) is bound read-only at /etc/ceph/ceph.conf in every node and
used by Faultline's clients on the host. No RGW. The mgr's prometheus module listens on
node1's address, port 9283, and the inventory names it (`client.prometheus`), so the
embedded Prometheus scrapes the lab while it is in the inventory.

Each node has a simulated BMC (lab/bmc.py: `ipmi_sim` on 127.0.0.1:16230+K, password in
<home>/bmc/password) whose chassis power cuts or boots the node's container
(`set_node_power`), so power faults go through `ipmitool` as on real servers.

`up` copes with what a killed earlier lab left; `down` removes every container, overlay,
cgroup, loop device, mount, namespace and link of this lab, never touching the Pacific
labs (other names, other subnets).

    python -m lab.ceph_reef up | down [--purge] | status
"""

from __future__ import annotations

import logging
import shutil
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from clusters.access import inventory
from clusters.ceph.admin import CephAdmin
from clusters.paths import default_inventory
from clusters.polling import poll_until

from . import (
    bmc,
    ceph_setup,
    container_nodes,
    disks,
    netns,
    node_root,
    nspawn,
    rootfs,
    script,
    sshd,
    teardown,
    zones,
)
from .ceph_layout import HEALTH_TIMEOUT, MGR_ID, MON_ID, OSD_COUNT, POOL
from .ceph_reef_layout import (
    BMC_BASE_PORT,
    CEPH_UID,
    CLUSTER_NAME,
    MASKED_UNITS,
    NETWORK,
    OSD_MOUNT,
    RELEASE,
    ReefLab,
    conf_text,
    lab_at,
)
from .exceptions import LabError

log = logging.getLogger(__name__)

# -- nodes -----------------------------------------------------------------------------


def _prepare_disks(lab: ReefLab, fresh: bool) -> None:
    """Mount the OSDs' images; `fresh`: anew (a leftover mount may hold a shut-down XFS),
    which only a lab whose nodes are all stopped may do (a node holds its disk's mount)."""
    for osd in range(OSD_COUNT):
        disks.create_image(lab.image(osd))
        if fresh:
            disks.unmount(lab.osd_dir(osd))
            disks.detach_loops(lab.image(osd))
        disks.mount_image(lab.image(osd), lab.osd_dir(osd))
        shutil.chown(lab.osd_dir(osd), CEPH_UID, CEPH_UID)


def _write_node_files(lab: ReefLab, node: netns.LabNode) -> None:
    """What the node holds of its own, in its overlay (lab/node_root.py)."""
    root = lab.container(node).root
    node_root.write_ssh_access(root, lab.ssh, node)
    node_root.mask_units(root, MASKED_UNITS)


def _binds(lab: ReefLab, node: netns.LabNode) -> list[nspawn.Bind]:
    return [nspawn.Bind(lab.conf, "/etc/ceph/ceph.conf", read_only=True),
            *(nspawn.Bind(lab.osd_dir(osd), OSD_MOUNT.format(osd=osd))
              for osd in lab.osds_on(node))]


def _start(lab: ReefLab, lower: Path, node: netns.LabNode) -> None:
    container = lab.container(node)
    nspawn.mount_root(container, lower)
    _write_node_files(lab, node)
    nspawn.boot(container, _binds(lab, node))


def _boot(lab: ReefLab, lower: Path, node: netns.LabNode) -> None:
    _start(lab, lower, node)
    nspawn.wait_booted(lab.container(node))


def set_node_power(home: Path | None, name: str, on: bool) -> None:
    """A node's power as its BMC switches it (lab/container_nodes.py set_power)."""
    lab = lab_at(home)
    container_nodes.set_power(lab, lab.node_named(name), on, rootfs.path(), _start)


def node_powered(home: Path | None, name: str) -> bool:
    lab = lab_at(home)
    return nspawn.nspawn_pid(lab.container(lab.node_named(name))) is not None


def _bmc_hook(lab: ReefLab) -> list[str]:
    """The BMCs' chassis control: this Python, lab/bmc_hook.py, the lab's home."""
    return [sys.executable, "-m", "lab.bmc_hook", str(lab.home)]


def _in_node(lab: ReefLab, node: netns.LabNode, *command: str, timeout: float = 300.0) -> str:
    return nspawn.run(lab.container(node), list(command), timeout=timeout).stdout


def _as_ceph(*command: str) -> list[str]:
    return ["setpriv", "--reuid=ceph", "--regid=ceph", "--init-groups", *command]


# -- cold start --------------------------------------------------------------------------


def _make_mon(lab: ReefLab, fsid: str) -> None:
    node, mon = lab.mon_node, f"/var/lib/ceph/mon/ceph-{MON_ID}"
    _in_node(lab, node, "install", "-d", "-o", "ceph", "-g", "ceph", mon,
             f"/var/lib/ceph/mgr/ceph-{MGR_ID}")
    _in_node(lab, node, *_as_ceph("monmaptool", "--create", "--clobber", "--fsid", fsid,
                                  "--addv", MON_ID,
                                  f"[v2:{node.address}:3300,v1:{node.address}:6789]",
                                  "/var/lib/ceph/tmp-monmap"))
    _in_node(lab, node, *_as_ceph("ceph-mon", "--mkfs", "-i", MON_ID, "--monmap",
                                  "/var/lib/ceph/tmp-monmap"))
    _in_node(lab, node, "systemctl", "enable", "--now", f"ceph-mon@{MON_ID}.service")


def _make_mgr(lab: ReefLab, admin: CephAdmin) -> None:
    """The manager, once its prometheus module knows where to listen: it starts with the
    module on (mgr_initial_modules) and is not restarted to move it."""
    ceph_setup.configure_prometheus(admin, lab.mon_node.address)
    _in_node(lab, lab.mon_node, "systemctl", "enable", "--now", f"ceph-mgr@{MGR_ID}.service")


def _make_osd(lab: ReefLab, osd: int, osd_uuid: str) -> None:
    node = lab.node_of(osd)
    _in_node(lab, node, *_as_ceph("ceph-osd", "-i", str(osd), "--mkfs", "--osd-uuid",
                                  osd_uuid))
    _in_node(lab, node, "systemctl", "enable", "--now", f"ceph-osd@{osd}.service")


def _initialise(lab: ReefLab, state: dict[str, Any]) -> CephAdmin:
    """A new cluster in booted nodes: the monitor and manager, then the OSDs, each enabled
    under its unit. Returns a connected admin."""
    _make_mon(lab, state["fsid"])
    admin = ceph_setup.admin(lab, timeout=30.0)
    _make_mgr(lab, admin)
    # the zone rule and the pool before any OSD boots, and the rule as the default, so the
    # mgr's .mgr pool is made on it too: PGs peer once, nothing is moved later (-9 s)
    rule = ceph_setup.ensure_crush_rule(admin)
    admin.command("config set", who="global", name="osd_pool_default_crush_rule",
                  value=str(rule))
    ceph_setup.disable_balancer(admin)
    ceph_setup.ensure_pools(admin, rgw=False)
    ceph_setup.make_osds(admin, lab, state,
                         lambda osd, osd_uuid: _make_osd(lab, osd, osd_uuid))
    return admin


def _wipe(lab: ReefLab) -> None:
    """A lab that never finished initialising: take it apart and start over."""
    container_nodes.stop_nodes(lab, lab.nodes)
    teardown.release_disks(lab.home)
    if disks.mounts_under(lab.home):
        raise LabError(f"cannot wipe {lab.home}: still mounted: {disks.mounts_under(lab.home)}")
    for name in ("nodes", "osd", "disks"):
        shutil.rmtree(lab.home / name, ignore_errors=True)
    for name in ("lab.json", "ceph.conf"):
        (lab.home / name).unlink(missing_ok=True)


# -- inventory -------------------------------------------------------------------------


def inventory_spec(lab: ReefLab) -> dict[str, Any]:
    """The lab as a cluster of the inventory: systemd-managed daemons on SSH-reached nodes."""
    services = [{"name": unit.removeprefix("ceph-").split("@")[0] + "."
                 + unit.split("@")[1].removesuffix(".service"),
                 "kind": unit.removeprefix("ceph-").split("@")[0], "node": node.name,
                 "unit": unit, "managed_by": "systemd"}
                for node in lab.nodes for unit in lab.units_on(node)]
    return {
        "kind": "ceph",
        "lab": True,
        "chaos": "allowed",  # a lab is made to take faults (clusters/safety/protection.py)
        "release": RELEASE,
        "ssh": {"user": "root", "port": sshd.PORT, "key_file": str(lab.ssh.client_key),
                "known_hosts": str(lab.ssh.known_hosts), "verify_host_keys": True},
        "nodes": [{"name": n.name, "address": n.address, "zone": zones.zone_name(n.index),
                   "netns": n.netns, "power": {
                       "type": "ipmi", "address": "127.0.0.1", "port": BMC_BASE_PORT + n.index,
                       "user": bmc.USER, "password_file": str(lab.bmc_password_file),
                       "interface": "lanplus", "cipher_suite": bmc.CIPHER_SUITE}}
                  for n in lab.nodes],
        "disks": [{"node": lab.node_of(osd).name, "device": str(lab.image(osd)),
                   "mount": str(lab.osd_dir(osd)), "osd": osd} for osd in range(OSD_COUNT)],
        "services": services,
        "client": {"conf": str(lab.conf), "keyring": None, "pool": POOL,
                   "prometheus": lab.metrics_url},
    }


# -- up / down / status ------------------------------------------------------------------


def _osd_addrs(admin: CephAdmin) -> dict[str, str]:
    """Each up OSD's address as the osdmap has it; its nonce is new at every start."""
    return {str(o["osd"]): o["public_addr"] for o in admin.command("osd dump")["osds"]
            if o.get("up")}


def _wait_osds_rebooted(admin: CephAdmin, before: dict[str, str], timeout: float) -> None:
    """After a boot of every node, wait until each OSD is up under a new address. The
    monitor comes back with the osdmap it had when it stopped, where OSDs that stopped with
    it are still up: their PGs look active+clean until it marks them down (grace) or their
    new instances boot, and a HEALTH_OK then would be a lie."""
    stale: list[str] = []

    def rebooted() -> bool:
        now = _osd_addrs(admin)
        stale[:] = sorted(f"osd.{osd}" for osd in map(str, range(OSD_COUNT))
                          if osd not in now or now[osd] == before.get(osd))
        return not stale
    poll_until("every OSD booted again", rebooted, timeout, 0.5, error=LabError,
               message=lambda _: f"waited {timeout:.0f} s for {', '.join(stale)} to boot again")


def up(home: Path | None = None, timeout: float = HEALTH_TIMEOUT) -> dict[str, Any]:
    """Bring the Reef lab up: build the root if missing (once), boot the nodes, make the
    cluster if it is new; return timings once HEALTH_OK with every OSD up+in and every PG
    active+clean. "mode" is "cold" (a new cluster) or "warm" (an existing one booted)."""
    lab = lab_at(home)
    started = time.monotonic()
    lower, build_s = rootfs.ensure()
    booting = time.monotonic()
    for directory in (lab.home, lab.run_dir, lab.log_dir):
        directory.mkdir(parents=True, exist_ok=True)
    state = lab.read_state()
    mode = "warm" if state.get("initialized") else "cold"
    if mode == "cold":
        _wipe(lab)
        state = {"fsid": str(uuid.uuid4()), "initialized": False, "release": RELEASE}
        lab.write_state(state)
    netns.create_network(NETWORK, lab.nodes)
    sshd.prepare(lab.nodes, lab.ssh)
    container_nodes.start_bmcs(lab, lab.nodes, _bmc_hook(lab))
    booted_now = not any(nspawn.nspawn_pid(lab.container(n)) for n in lab.nodes)
    _prepare_disks(lab, fresh=booted_now)
    lab.conf.write_text(conf_text(lab, state["fsid"]))
    with ThreadPoolExecutor(max_workers=len(lab.nodes)) as pool:
        list(pool.map(lambda node: _boot(lab, lower, node), lab.nodes))
    nodes_booted = time.monotonic()
    if mode == "cold":
        log.info("initialising a new Reef lab in %s", lab.home)
        admin = _initialise(lab, state)
    else:
        admin = ceph_setup.admin(lab)
    try:
        if mode == "warm" and booted_now:
            _wait_osds_rebooted(admin, state.get("osd_addrs") or {}, timeout)
        ceph_setup.ensure_crush_zones(admin, {n.name: zones.zone_name(n.index)
                                              for n in lab.nodes})
        ceph_setup.ensure_pools(admin, rgw=False)
        if mode == "warm":  # a lab made before its mgr exported metrics
            ceph_setup.configure_prometheus(admin, lab.mon_node.address)
            ceph_setup.ensure_prometheus_enabled(admin)
        final = ceph_setup.settle(admin, timeout)
        state["osd_addrs"] = _osd_addrs(admin)
        lab.write_state(state)
    finally:
        admin.close()
    healthy = time.monotonic()
    for node in lab.nodes:
        sshd.wait_listening(node.address)
    inventory.write_cluster(default_inventory(), CLUSTER_NAME, inventory_spec(lab))
    log.info("Reef lab HEALTH_OK %.1f s after the root was ready", healthy - booting)
    return {
        "mode": mode,
        "release": RELEASE,
        "home": str(lab.home),
        "rootfs": str(lower),
        "rootfs_build_s": build_s,
        "seconds_to_nodes_booted": round(nodes_booted - booting, 1),
        "seconds_to_health_ok": round(healthy - booting, 1),
        "seconds_total": round(time.monotonic() - started, 1),
        "inventory": str(default_inventory()),
        "cluster": CLUSTER_NAME,
        "state": final.as_dict(),
    }


def leftovers(home: Path | None = None) -> dict[str, list]:
    """What of the lab is still on the machine: all lists are empty after a clean `down`."""
    lab = lab_at(home)
    return container_nodes.leftovers(lab, lab.nodes, NETWORK)


def down(home: Path | None = None, purge: bool = False) -> dict[str, Any]:
    """Stop the nodes and remove the lab from the machine; `purge` also deletes its data
    (the cached root stays: lab/rootfs.py)."""
    lab = lab_at(home)
    started = time.monotonic()
    inventory.remove_cluster(default_inventory(), CLUSTER_NAME)
    # the BMCs first: no BMC may boot a node while the lab goes down
    stopped = container_nodes.stop_bmcs(lab, lab.nodes)
    stopped.update(container_nodes.stop_nodes(lab, lab.nodes))
    return teardown.finish_down(lab.home, NETWORK, purge, started, stopped,
                                lambda: leftovers(home))


def status(home: Path | None = None) -> dict[str, Any]:
    """Each node (booted or not) and each unit's state, the disks, and the health."""
    lab = lab_at(home)
    daemons: dict[str, Any] = {}
    for node in lab.nodes:
        daemons.update(container_nodes.node_states(lab, node, lab.units_on(node)))
    mon_alive = daemons.get(f"ceph-mon@{MON_ID}.service", {}).get("alive", False)
    return {**ceph_setup.lab_status(lab, NETWORK, daemons, mon_alive), "release": RELEASE}


def main(argv: list[str] | None = None) -> int:
    return script.main("ceph_reef", up, down, status, argv)


if __name__ == "__main__":
    sys.exit(main())
