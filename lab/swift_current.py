"""The current-release Swift lab: Swift 2.35 from Debian 13, its daemons under Debian's own
systemd units, written into the inventory as `lab-swift-current`.

Nodes are containers booting systemd (lab/nspawn.py) over one cached Debian 13 root with
Swift's packages (lab/rootfs.py `SWIFT`), each in a network namespace of this lab
(lab/netns.py: bridge `flbr3`, node K `flswcK` at 10.80.0.(10+K)), reached over its own
sshd; layout in lab/swift_current_layout.py. The units keep their stock
`Restart=on-failure` (systemd's default RestartSec, 100 ms: a SIGKILLed server is back at
once) and are enabled in each node's overlay, so a warm start is just booting the nodes.

Each storage node's device is a loop-mounted XFS image on the host, bound into its node at
/srv/node/dK and owned by the root's swift user. Each node has a simulated BMC
(lab/bmc.py: `ipmi_sim` on 127.0.0.1:16240+K) whose chassis power cuts or boots it.

`up` copes with what a killed earlier lab left; `down` removes every container, overlay,
cgroup, loop device, mount, namespace and link of this lab, never touching the others.

    python -m lab.swift_current up | down [--purge] | status
"""

from __future__ import annotations

import logging
import shutil
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from clusters.access import inventory
from clusters.paths import default_inventory
from clusters.polling import poll_until
from clusters.swift.admin import answers_healthcheck

from . import (
    bmc,
    container_nodes,
    disks,
    netns,
    node_root,
    nspawn,
    rootfs,
    script,
    sshd,
    swift,
    swift_api,
    swift_layout,
    swift_rings,
    teardown,
    zones,
)
from .exceptions import LabError
from .swift_current_layout import (
    BMC_BASE_PORT,
    CLUSTER_NAME,
    NETWORK,
    NODE_SWIFT_DIR,
    PROXY_PORT,
    RELEASE,
    SWIFT_USER,
    SwiftCurrentLab,
    lab_at,
    node_files,
    shared_files,
)
from .swift_layout import AUTH_KEY, AUTH_USER, HEALTH_TIMEOUT, SERVER_PORTS, SERVER_TYPES

log = logging.getLogger(__name__)


# -- nodes -----------------------------------------------------------------------------


def _swift_ids(lower: Path) -> tuple[int, int]:
    """The swift user's uid and gid in the root (a system user: its number is the
    package's choice)."""
    for line in (lower / "etc/passwd").read_text().splitlines():
        fields = line.split(":")
        if fields[0] == SWIFT_USER:
            return int(fields[2]), int(fields[3])
    raise LabError(f"the Swift root {lower} has no {SWIFT_USER} user")


def _prepare_disks(lab: SwiftCurrentLab, lower: Path, fresh: bool) -> None:
    """Mount each storage node's image; `fresh`: anew (a leftover mount may hold a
    shut-down XFS), which only a lab whose nodes are all stopped may do."""
    uid, gid = _swift_ids(lower)
    for node in lab.nodes:
        disks.create_image(lab.image(node), size=swift_layout.disk_bytes(node))
        if fresh:
            disks.unmount(lab.mount_point(node))
            disks.detach_loops(lab.image(node))
        disks.mount_image(lab.image(node), lab.mount_point(node))
        shutil.chown(lab.mount_point(node), uid, gid)


def _write_node_files(lab: SwiftCurrentLab, node: netns.LabNode) -> None:
    """What the node holds of its own, in its overlay: SSH access (lab/node_root.py), its
    Swift configuration, the shared swift.conf and rings, and its units enabled."""
    root = lab.container(node).root
    node_root.write_ssh_access(root, lab.ssh, node)
    (root / NODE_SWIFT_DIR.lstrip("/")).mkdir(parents=True, exist_ok=True)
    for path, text in node_files(lab, node).items():
        (root / path.lstrip("/")).write_text(text)
    for source in shared_files(lab):
        shutil.copyfile(source, root / NODE_SWIFT_DIR.lstrip("/") / source.name)
    node_root.enable_units(root, [*lab.units_on(node).values(),
                                  *lab.support_units_on(node)])


def _binds(lab: SwiftCurrentLab, node: netns.LabNode) -> list[nspawn.Bind]:
    if node == lab.proxy_node:
        return []
    return [nspawn.Bind(lab.mount_point(node), lab.node_device(node))]


def _start(lab: SwiftCurrentLab, lower: Path, node: netns.LabNode) -> None:
    container = lab.container(node)
    nspawn.mount_root(container, lower)
    _write_node_files(lab, node)
    nspawn.boot(container, _binds(lab, node))


def _boot(lab: SwiftCurrentLab, lower: Path, node: netns.LabNode) -> None:
    _start(lab, lower, node)
    nspawn.wait_booted(lab.container(node))


def set_node_power(home: Path | None, name: str, on: bool) -> None:
    """A node's power as its BMC switches it (lab/container_nodes.py set_power)."""
    lab = lab_at(home)
    container_nodes.set_power(lab, lab.node_named(name), on, rootfs.path(rootfs.SWIFT),
                              _start)


def node_powered(home: Path | None, name: str) -> bool:
    lab = lab_at(home)
    return nspawn.nspawn_pid(lab.container(lab.node_named(name))) is not None


def _wipe(lab: SwiftCurrentLab) -> None:
    """A lab that never answered a first PUT/GET: take it apart and start over."""
    container_nodes.stop_nodes(lab, lab.all_nodes)
    teardown.release_disks(lab.home)
    if disks.mounts_under(lab.home):
        raise LabError(f"cannot wipe {lab.home}: still mounted: {disks.mounts_under(lab.home)}")
    for name in ("nodes", "disks", "srv", "etc"):
        shutil.rmtree(lab.home / name, ignore_errors=True)
    for name in ("lab.json", "dispersion-populated"):
        (lab.home / name).unlink(missing_ok=True)


# -- inventory -------------------------------------------------------------------------


def inventory_spec(lab: SwiftCurrentLab) -> dict[str, Any]:
    """The lab as a cluster of the inventory: systemd-managed daemons on SSH-reached nodes,
    the same service names and kinds as the Pacific Swift lab's."""
    services = []
    for node in lab.all_nodes:
        for kind, unit in lab.units_on(node).items():
            name = kind if node == lab.proxy_node else f"{kind}.{node.name}"
            services.append({"name": name, "kind": kind, "node": node.name, "unit": unit,
                             "managed_by": "systemd"})
    return {
        "kind": "swift",
        "lab": True,
        "chaos": "allowed",  # a lab is made to take faults (clusters/safety/protection.py)
        "release": RELEASE,
        "ssh": {"user": "root", "port": sshd.PORT, "key_file": str(lab.ssh.client_key),
                "known_hosts": str(lab.ssh.known_hosts), "verify_host_keys": True},
        "nodes": [{"name": n.name, "address": n.address, "netns": n.netns,
                   **({} if n == lab.proxy_node else {"zone": zones.zone_name(n.index)}),
                   "power": {"type": "ipmi", "address": "127.0.0.1",
                             "port": BMC_BASE_PORT + n.index, "user": bmc.USER,
                             "password_file": str(lab.bmc_password_file),
                             "interface": "lanplus", "cipher_suite": bmc.CIPHER_SUITE}}
                  for n in lab.all_nodes],
        "disks": [{"node": n.name, "device": str(lab.image(n)), "mount": lab.node_device(n),
                   "swift_device": lab.device(n)} for n in lab.nodes],
        "services": services,
        "client": {"auth_url": lab.auth_url, "user": AUTH_USER, "key_file": str(lab.key_file),
                   "swift_dir": str(lab.etc), "swift_conf": str(lab.swift_conf),
                   "ports": dict(SERVER_PORTS),
                   "s3": {"endpoint": lab.s3_endpoint,
                          "access_key_file": str(lab.s3_access_key_file),
                          "secret_key_file": str(lab.s3_secret_key_file),
                          "region": swift_layout.S3_REGION}},
    }


# -- up / down / status ------------------------------------------------------------------


def _wait_answering(lab: SwiftCurrentLab, timeout: float) -> None:
    """Every storage server and the proxy answer their healthcheck, then a PUT/GET works
    through the proxy (tempauth keeps tokens in memcached: a 401 just after start is
    waited out)."""
    checks = [(f"{t}-server on {n.name}", n.address, SERVER_PORTS[t])
              for n in lab.nodes for t in SERVER_TYPES]
    checks.append(("the proxy", lab.proxy_node.address, PROXY_PORT))
    for what, address, port in checks:
        poll_until(f"{what} to answer its healthcheck",
                   lambda a=address, p=port: answers_healthcheck(a, p), timeout, 0.2,
                   error=LabError)
    swift_api.wait_for_round_trip(f"the Swift proxy at {lab.auth_url}", lab.auth_url,
                                  AUTH_USER, AUTH_KEY, timeout, retry_client_errors=True)


def up(home: Path | None = None, timeout: float = HEALTH_TIMEOUT) -> dict[str, Any]:
    """Bring the lab up: build the root if missing (once), boot the nodes, make the rings
    if the lab is new; return timings once a PUT/GET works through the proxy. "mode" is
    "cold" (a new cluster) or "warm" (an existing one booted)."""
    lab = lab_at(home)
    started = time.monotonic()
    lower, build_s = rootfs.ensure(rootfs.SWIFT)
    booting = time.monotonic()
    for directory in (lab.home, lab.run_dir, lab.log_dir, lab.etc):
        directory.mkdir(parents=True, exist_ok=True)
    state = lab.read_state()
    mode = "warm" if state.get("initialized") else "cold"
    if mode == "cold":
        _wipe(lab)
        lab.etc.mkdir(parents=True, exist_ok=True)
        state = {"initialized": False, "release": RELEASE}
        lab.write_state(state)
    lab.swift_conf.write_text(swift_layout.swift_conf_text())
    swift_layout.write_credentials(lab)
    swift_rings.build_rings(lab)
    netns.create_network(NETWORK, lab.all_nodes)
    sshd.prepare(lab.all_nodes, lab.ssh)
    container_nodes.start_bmcs(lab, lab.all_nodes, [sys.executable, "-m", "lab.bmc_hook",
                                                    "swift-current", str(lab.home)])
    booted_now = not any(nspawn.nspawn_pid(lab.container(n)) for n in lab.all_nodes)
    _prepare_disks(lab, lower, fresh=booted_now)
    with ThreadPoolExecutor(max_workers=len(lab.all_nodes)) as pool:
        list(pool.map(lambda node: _boot(lab, lower, node), lab.all_nodes))
    nodes_booted = time.monotonic()
    _wait_answering(lab, timeout)
    ready = time.monotonic()
    state["initialized"] = True
    lab.write_state(state)
    for node in lab.all_nodes:
        sshd.wait_listening(node.address)
    inventory.write_cluster(default_inventory(), CLUSTER_NAME, inventory_spec(lab))
    swift.populate_dispersion_once(lab, CLUSTER_NAME)
    log.info("current Swift lab answered a PUT/GET %.1f s after the root was ready",
             ready - booting)
    return {
        "mode": mode,
        "release": RELEASE,
        "home": str(lab.home),
        "rootfs": str(lower),
        "rootfs_build_s": build_s,
        "seconds_to_nodes_booted": round(nodes_booted - booting, 1),
        "seconds_to_first_put_get": round(ready - booting, 1),
        "seconds_total": round(time.monotonic() - started, 1),
        "inventory": str(default_inventory()),
        "cluster": CLUSTER_NAME,
        "auth_url": lab.auth_url,
    }


def leftovers(home: Path | None = None) -> dict[str, list]:
    """What of the lab is still on the machine: all lists are empty after a clean `down`."""
    lab = lab_at(home)
    return container_nodes.leftovers(lab, lab.all_nodes, NETWORK)


def down(home: Path | None = None, purge: bool = False) -> dict[str, Any]:
    """Stop the nodes and remove the lab from the machine; `purge` also deletes its data
    (the cached root stays: lab/rootfs.py)."""
    lab = lab_at(home)
    started = time.monotonic()
    inventory.remove_cluster(default_inventory(), CLUSTER_NAME)
    # the BMCs first: no BMC may boot a node while the lab goes down
    stopped = container_nodes.stop_bmcs(lab, lab.all_nodes)
    stopped.update(container_nodes.stop_nodes(lab, lab.all_nodes))
    return teardown.finish_down(lab.home, NETWORK, purge, started, stopped,
                                lambda: leftovers(home))


def status(home: Path | None = None) -> dict[str, Any]:
    """Each node (booted or not) and each unit's state, the devices, and the proxy."""
    lab = lab_at(home)
    daemons: dict[str, Any] = {}
    for node in lab.all_nodes:
        daemons.update(container_nodes.node_states(
            lab, node, list(lab.units_on(node).values()), prefix=f"{node.name}:"))
    return {"home": str(lab.home), "release": RELEASE, "daemons": daemons,
            "mounts": {str(lab.mount_point(n)): disks.is_mounted(lab.mount_point(n))
                       for n in lab.nodes},
            "loop_devices": disks.loop_devices_under(lab.home),
            "namespaces": netns.existing_namespaces(NETWORK),
            "proxy_healthcheck": answers_healthcheck(lab.proxy_node.address, PROXY_PORT)}


def main(argv: list[str] | None = None) -> int:
    return script.main("swift_current", up, down, status, argv)


if __name__ == "__main__":
    sys.exit(main())
