"""The Swift lab: a real Swift 2.30 cluster on this machine, written into the inventory.

Layout in lab/swift_layout.py: a proxy and memcached in the root namespace, four
storage nodes in namespaces flswift1..4 (10.78.0.11-14), each with its own
sshd, rsync daemon, loop-mounted XFS device and account/container/object
servers with their replicators, auditors and updaters. The storage node
programs are started over SSH with the very commands the inventory records, so
the actions that restart a server later use a command known to work.

`up` copes with whatever a killed earlier lab left; `down` leaves nothing.

    python -m lab.swift up | down [--purge] | status
"""

from __future__ import annotations

import logging
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from clusters.access import inventory
from clusters.paths import default_inventory
from clusters.polling import poll_until
from clusters.swift.admin import SwiftAdmin, answers_healthcheck

from . import (
    disks,
    memcg,
    netns,
    procs,
    script,
    sshd,
    swift_api,
    swift_layout,
    swift_rings,
    teardown,
)
from .exceptions import LabError
from .swift_layout import (
    AUTH_USER,
    CLUSTER_NAME,
    HEALTH_TIMEOUT,
    MEMCACHE_PORT,
    NETWORK,
    NODE_MEMORY_MIB,
    PROXY_ADDRESS,
    PROXY_PORT,
    SERVER_PORTS,
    SERVER_TYPES,
    SwiftLab,
    lab_at,
    programs_of_node,
    zone_of,
)

log = logging.getLogger(__name__)

PROXY = "proxy-server"
MEMCACHED = "memcached"


# -- what runs where -----------------------------------------------------------------------


def node_services(lab: SwiftLab, node: netns.LabNode) -> dict[str, tuple[str, str]]:
    """{service name: (program, start command)} of one storage node, servers first."""
    services = {}
    for program in programs_of_node():
        name = f"{program}.{node.name}"
        conf = lab.server_conf(program.split("-", 1)[0], node)
        services[name] = (f"swift-{program}",
                          memcg.born_in(node, lab.start_command(program, conf, name)))
    services[f"rsyncd.{node.name}"] = ("rsync",
                                       memcg.born_in(node, lab.rsync_start_command(node)))
    return services


def _memcached_argv(lab: SwiftLab) -> list[str]:
    return ["memcached", "-d", "-u", "root", "-l", PROXY_ADDRESS, "-p", str(MEMCACHE_PORT),
            "-U", "0", "-m", "64", "-c", "1024", "-t", "1", "-P", str(lab.pid_file(MEMCACHED))]


def _outside(lab: SwiftLab) -> dict[Path, str | None]:
    """The node programs running outside their node's memory cgroup, for procs.stop_many."""
    outside = {}
    for node in lab.nodes:
        for name, (program, _) in node_services(lab, node).items():
            pid = procs.alive_pid(lab.pid_file(name), program)
            if pid is not None and memcg.outside(node, pid):
                outside[lab.pid_file(name)] = program
    return outside


def _local_targets(lab: SwiftLab) -> dict[Path, str | None]:
    return {lab.pid_file(PROXY): "swift-proxy-server", lab.pid_file(MEMCACHED): "memcached"}


def _node_targets(lab: SwiftLab) -> dict[Path, str | None]:
    return {lab.pid_file(name): program for node in lab.nodes
            for name, (program, _) in node_services(lab, node).items()}


# -- start ---------------------------------------------------------------------------------


def _start_node(lab: SwiftLab, node: netns.LabNode) -> None:
    """Mount the node's device, then start what is not running over one SSH session."""
    _mount(lab, node)
    missing = {name: spec for name, spec in node_services(lab, node).items()
               if procs.alive_pid(lab.pid_file(name), spec[0]) is None}
    if not missing:
        return
    for name in missing:
        lab.pid_file(name).unlink(missing_ok=True)
    script = " && ".join(command for _, command in missing.values())
    sshd.run(node, lab.ssh, script, timeout=60)
    for name, (program, _) in missing.items():
        procs.wait_for_pid_file(lab.pid_file(name), program=program, timeout=30,
                                log_file=lab.log_file(name))


def _mount(lab: SwiftLab, node: netns.LabNode) -> None:
    """Mount the node's device anew unless a live mount is there.

    A failed disk leaves a shut-down XFS (EIO) or a lazily unmounted one whose old
    loop device lives on: a fresh loop device and `nouuid` give the data back.
    """
    mount_point = lab.mount_point(node)
    if disks.is_mounted(mount_point) and disks.is_readable(mount_point):
        return
    disks.unmount(mount_point)
    disks.detach_loops(lab.image(node))  # freed once the dead fs lets go (autoclear)
    disks.create_image(lab.image(node), size=swift_layout.disk_bytes(node))
    disks.mount_fresh(lab.image(node), mount_point)


def _start_proxy(lab: SwiftLab) -> None:
    procs.start_daemon(_memcached_argv(lab), lab.pid_file(MEMCACHED), lab.log_file(MEMCACHED),
                       program="memcached")
    if procs.alive_pid(lab.pid_file(PROXY), "swift-proxy-server") is None:
        lab.pid_file(PROXY).unlink(missing_ok=True)
        procs.run_detached(["sh", "-c", lab.start_command("proxy-server", lab.proxy_conf, PROXY)],
                           lab.log_file(PROXY))
        procs.wait_for_pid_file(lab.pid_file(PROXY), program="swift-proxy-server",
                                log_file=lab.log_file(PROXY))


# -- checks --------------------------------------------------------------------------------


def _wait_for(what: str, check, timeout: float) -> None:
    """Poll check() until it is true; raise LabError naming `what` on timeout."""
    poll_until(what, check, timeout, 0.2, error=LabError)


# -- inventory -------------------------------------------------------------------------------


def inventory_spec(lab: SwiftLab) -> dict[str, Any]:
    """The lab as a cluster of the inventory (schema: clusters/access/inventory.py)."""
    ssh = lab.ssh
    services: list[dict[str, Any]] = []
    for node in lab.nodes:
        for name, (program, command) in node_services(lab, node).items():
            services.append({"name": name, "kind": name.split(".", 1)[0], "node": node.name,
                             "pid_file": str(lab.pid_file(name)), "start": command,
                             "program": program})
    services.append({"name": PROXY, "kind": PROXY, "pid_file": str(lab.pid_file(PROXY)),
                     "start": lab.start_command("proxy-server", lab.proxy_conf, PROXY),
                     "program": "swift-proxy-server"})
    return {
        "kind": "swift",
        "lab": True,
        "chaos": "allowed",  # a lab is made to take faults (clusters/safety/protection.py)
        "ssh": {"user": "root", "port": sshd.PORT, "key_file": str(ssh.client_key),
                "known_hosts": str(ssh.known_hosts), "verify_host_keys": True},
        "nodes": [{"name": n.name, "address": n.address, "zone": f"zone{zone_of(n)}",
                   "netns": n.netns, "memory_cgroup": str(memcg.cgroup_of(n))}
                  for n in lab.nodes],
        "disks": [{"node": n.name, "device": str(lab.image(n)), "mount": str(lab.mount_point(n)),
                   "swift_device": lab.device(n)} for n in lab.nodes],
        "services": services,
        "client": {"auth_url": lab.auth_url, "user": AUTH_USER, "key_file": str(lab.key_file),
                   "swift_dir": str(lab.etc), "swift_conf": str(lab.swift_conf),
                   "ports": dict(SERVER_PORTS),
                   "s3": {"endpoint": f"http://{PROXY_ADDRESS}:{PROXY_PORT}",
                          "access_key_file": str(lab.s3_access_key_file),
                          "secret_key_file": str(lab.s3_secret_key_file),
                          "region": swift_layout.S3_REGION}},
    }


# -- up / down / status ----------------------------------------------------------------------


def _clear_leftovers(lab: SwiftLab) -> None:
    for pid_file, program in {**_local_targets(lab), **_node_targets(lab)}.items():
        procs.remove_stale(pid_file, program)
    for node in lab.nodes:
        procs.remove_stale(lab.ssh.pid_file(node), "sshd")


def populate_dispersion_once(lab: SwiftLab, cluster_name: str = CLUSTER_NAME) -> None:
    """The dispersion report needs its sample objects: written once per lab, after the rings
    (lab/swift_current.py's too)."""
    marker = lab.home / "dispersion-populated"
    if marker.exists():
        return
    cluster = inventory.load_cluster(default_inventory(), cluster_name)
    with SwiftAdmin(cluster) as admin:
        admin.populate_dispersion()
    marker.write_text(f"{time.time()}\n")


def up(home: Path | None = None, timeout: float = HEALTH_TIMEOUT) -> dict[str, Any]:
    """Bring the Swift lab up (idempotent) and wait until a PUT/GET through the proxy works."""
    lab = lab_at(home)
    started = time.monotonic()
    lab.home.mkdir(parents=True, exist_ok=True)
    _clear_leftovers(lab)
    fresh = not all(path.exists() for path in swift_rings.ring_files(lab))
    swift_layout.write_configs(lab)
    swift_rings.build_rings(lab)
    netns.create_network(NETWORK, lab.nodes)
    sshd.prepare(lab.nodes, lab.ssh)
    with ThreadPoolExecutor(max_workers=len(lab.nodes)) as pool:
        list(pool.map(lambda node: sshd.start(node, lab.ssh), lab.nodes))
        for node in lab.nodes:
            memcg.confine(node, NODE_MEMORY_MIB)
        # a server started before its node had a memory cgroup: restarted, born inside
        procs.stop_many(_outside(lab), group=True)
        _start_proxy(lab)
        list(pool.map(lambda node: _start_node(lab, node), lab.nodes))
    daemons_started = time.monotonic()
    for node in lab.nodes:
        for server_type in SERVER_TYPES:
            _wait_for(f"{server_type}-server on {node.name} to answer its healthcheck",
                      lambda n=node, t=server_type: answers_healthcheck(n.address,
                                                                       SERVER_PORTS[t]),
                      timeout)
    _wait_for("the proxy to answer its healthcheck",
              lambda: answers_healthcheck(PROXY_ADDRESS, PROXY_PORT), timeout)
    # tempauth keeps tokens in memcached: a 401 right after start is worth waiting out
    swift_api.wait_for_round_trip(f"the Swift proxy at {lab.auth_url}", lab.auth_url, AUTH_USER,
                                  swift_layout.AUTH_KEY, timeout, retry_client_errors=True)
    ready = time.monotonic()
    inventory.write_cluster(default_inventory(), CLUSTER_NAME, inventory_spec(lab))
    populate_dispersion_once(lab)
    return {"mode": "cold" if fresh else "warm", "home": str(lab.home),
            "seconds_to_daemons": round(daemons_started - started, 1),
            "seconds_to_first_put_get": round(ready - started, 1),
            "inventory": str(default_inventory()), "cluster": CLUSTER_NAME,
            "auth_url": lab.auth_url}


def leftovers(home: Path | None = None) -> dict[str, list]:
    """What of the lab is still on the machine (lab.teardown.leftovers)."""
    lab = lab_at(home)
    pid_files = [*_local_targets(lab), *_node_targets(lab),
                 *(lab.ssh.pid_file(n) for n in lab.nodes)]
    return {**teardown.leftovers(lab.home, NETWORK, pid_files),
            "memory_cgroups": memcg.leftovers(lab.nodes)}


def down(home: Path | None = None, purge: bool = False) -> dict[str, Any]:
    """Stop the lab and remove it from the machine; `purge` also deletes its data."""
    lab = lab_at(home)
    started = time.monotonic()
    inventory.remove_cluster(default_inventory(), CLUSTER_NAME)
    stopped = procs.stop_many({**_local_targets(lab), **_node_targets(lab),
                               **sshd.stop_targets(lab.nodes, lab.ssh)}, group=True)
    memcg.release(lab.nodes)
    stray = teardown.remove(lab.home, NETWORK, purge)
    left = leftovers(home)
    if stray:
        left["namespace_processes"] = stray
    return {"seconds": round(time.monotonic() - started, 1), "stopped": stopped,
            "purged": purge, "leftovers": left}


def status(home: Path | None = None) -> dict[str, Any]:
    """Each program's pid/alive/rss, the devices' mounts, and the proxy's healthcheck."""
    lab = lab_at(home)
    daemons: dict[str, Any] = {}
    targets = {**_local_targets(lab), **_node_targets(lab)}
    targets.update({lab.ssh.pid_file(n): "sshd" for n in lab.nodes})
    for pid_file, program in targets.items():
        pid = procs.read_pid(pid_file)
        alive = pid is not None and procs.is_alive(pid, program)
        daemons[pid_file.stem] = {"pid": pid, "alive": alive,
                                  "rss_bytes": procs.rss_bytes(pid) if alive and pid else None}
    proxy_ok = answers_healthcheck(PROXY_ADDRESS, PROXY_PORT)
    return {"home": str(lab.home), "daemons": daemons,
            "mounts": {str(lab.mount_point(n)): disks.is_mounted(lab.mount_point(n))
                       for n in lab.nodes},
            "loop_devices": disks.loop_devices_under(lab.home),
            "namespaces": netns.existing_namespaces(NETWORK),
            "proxy_healthcheck": proxy_ok}


def main(argv: list[str] | None = None) -> int:
    return script.main("swift", up, down, status, argv)


if __name__ == "__main__":
    sys.exit(main())
