"""Swift faults and their restores, as Chaos Toolkit actions.

Servers are signalled by PID on the node that runs them (over SSH), as the
inventory describes them (`<type>-server.<node>`, and `proxy-server`); nothing
is matched by process name. kill_server takes an `intent`, "down" (the default) or
"crash", as actions.ceph.kill_osd does (clusters/faults/supervision.py): Debian's Swift units
restart a killed server too.
"""

from __future__ import annotations

import dataclasses
import time

from chaoslib.exceptions import ActivityFailed

import clusters.swift.admin
from clusters.access import services
from clusters.access.config import cluster_from_configuration
from clusters.access.inventory import Cluster, Service
from clusters.exceptions import ClusterError, InvalidScale
from clusters.polling import poll_until
from clusters.safety import fault_ledger
from clusters.swift import new_device, scale_steps
from clusters.swift.admin import DEFAULT_PORTS, SwiftAdmin, proxy_address

from .fault_spec import SIGSTOP, Fault, Scope, where
from .safety import (
    check_blast_radius,
    check_intent,
    cluster_of,
    fail,
    fault_action,
    inject_process_fault,
    ledger_before,
    ledger_restored,
    process_record,
    recorded,
    refused_record,
    restore_report,
    undo_process_fault,
)

__all__ = ["kill_server", "start_server", "hang_server", "resume_server", "add_device",
           "remove_device"]

SERVERS = ("object", "container", "account", "proxy")


def _service(cluster: Cluster, server: str, node: str) -> Service:
    """The inventory's service for `server` on `node`; one clear message for bad input."""
    if cluster.kind != "swift":
        raise ActivityFailed(f"{cluster.name} is a {cluster.kind} cluster, not Swift")
    if server not in SERVERS:
        raise ActivityFailed(f"unknown Swift server {server!r} (one of: {', '.join(SERVERS)})")
    try:
        if server == "proxy":
            return cluster.service("proxy-server")
        cluster.node(node)  # "no node X (nodes: ...)" before "no service"
        return cluster.service(f"{server}-server.{node}")
    except ClusterError as exc:
        raise ActivityFailed(str(exc)) from None


def check_arguments(func: str, arguments: dict, cluster: Cluster) -> None:
    """Before a run: the server exists and its node holds a device of the ring; a scale
    device's node, name, size, weight and rings make sense."""
    if func in ("add_device", "remove_device"):
        try:
            _scale_device(cluster, arguments)
        except ClusterError as exc:
            raise ActivityFailed(str(exc)) from None
        return
    if func not in ("kill_server", "start_server", "hang_server", "resume_server"):
        return
    server, node = arguments.get("server", "object"), arguments.get("node", "node1")
    if not isinstance(server, str) or not isinstance(node, str):
        raise ActivityFailed(f"server and node must be names, not {server!r} and {node!r}")
    _service(cluster, server, node)
    if func == "kill_server":
        check_intent(arguments.get("intent", "down"))
    if server == "proxy":
        return
    address = cluster.node(node).address
    try:
        with SwiftAdmin(cluster) as admin:
            in_ring = any(d.ip == address for d in admin.ring_facts().devices[server])
    except ClusterError as exc:
        raise ActivityFailed(str(exc)) from None
    if not in_ring:
        raise ActivityFailed(f"node {node} ({address}) holds no device of the {server} ring")


def _guard(cluster: Cluster, server: str, node: str, what: str,
           allow_unavailable: bool) -> dict | None:
    """The guard's verdict on taking the server's devices away (none for the proxy, which
    holds no copy)."""
    if server == "proxy":
        return None
    keys = {f"{server}:{d.node}/{d.swift_device}" for d in cluster.disks_on(node)}
    return check_blast_radius(cluster, what, allow_unavailable, swift_keys=keys)


@fault_action
def kill_server(server: str = "object", node: str = "node1", allow_unavailable: bool = False,
                intent: str = "down", configuration: dict = None) -> dict:
    """Kill one Swift server with SIGKILL: the `server` ("object", "container", "account"
    or "proxy") of storage node `node` (ignored for the proxy). intent "down" keeps it
    stopped until start_server (a systemd unit is masked until then); "crash" lets its
    supervisor restart it. Refused if it would leave data with fewer copies than a write
    quorum, unless allow_unavailable. Returns the service, its node, the PID killed and the
    intent."""
    cluster = cluster_from_configuration(configuration)
    service = _service(cluster, server, node)
    verdict = _guard(cluster, server, node, f"kill {service.name}", allow_unavailable)
    try:
        done = inject_process_fault(cluster, service, intent, "actions.swift.start_server",
                                    {"server": server, "node": node})
    except (ClusterError, ValueError) as exc:
        raise ActivityFailed(f"kill_server: {exc}") from None
    return {"service": service.name, "node": service.node, "signal": "KILL", **done,
            "guard": verdict}


@fault_action
def hang_server(server: str = "object", node: str = "node1", allow_unavailable: bool = False,
                configuration: dict = None) -> dict:
    """Hang one Swift server with SIGSTOP until resume_server: it keeps its listening
    socket, so connections are accepted by the kernel and then answered by nobody; the
    proxy waits node_timeout for each before it tries another node. Guarded as a kill is.
    Returns the service, its node and the PID stopped."""
    return _take_server(server, node, allow_unavailable, configuration, "hang", "hung", "STOP",
                        "resume_server", services.suspend)


def _take_server(server: str, node: str, allow_unavailable: bool, configuration: dict | None,
                 verb: str, done: str, signal: str, restore: str, act) -> dict:
    """Guard, ledger entry, then `act(cluster, service)` (which returns the PID)."""
    cluster = cluster_from_configuration(configuration)
    service = _service(cluster, server, node)
    verdict = _guard(cluster, server, node, f"{verb} {service.name}", allow_unavailable)
    ledger_before(cluster, f"daemon:{service.name}", f"{service.name} {done} (SIG{signal})",
                  f"actions.swift.{restore}", {"server": server, "node": node})
    try:
        pid = act(cluster, service)
    except ClusterError as exc:
        raise ActivityFailed(f"{verb}_server: {exc}") from None
    return {"service": service.name, "node": service.node, "pid": pid, "signal": signal,
            "guard": verdict}


def resume_server(server: str = "object", node: str = "node1",
                  configuration: dict = None) -> dict:
    """SIGCONT a hung Swift server (the restore of hang_server); it answers again at once.
    Returns whether it was running."""
    cluster = cluster_from_configuration(configuration)
    service = _service(cluster, server, node)
    try:
        pid = services.resume(cluster, service)
    except ClusterError as exc:
        raise ActivityFailed(f"resume_server: {exc}") from None
    ledger_restored(cluster, f"daemon:{service.name}")
    return {"service": service.name, "resumed": pid is not None, "pid": pid}


def start_server(server: str = "object", node: str = "node1", timeout_s: float = 60,
                 configuration: dict = None) -> dict:
    """Start a Swift server again (the restore of kill_server), undoing what kill_server did
    as the fault ledger recorded it, and wait until it answers its healthcheck. Starting a
    running server changes nothing. Reports as actions.ceph.start_osd does."""
    cluster = cluster_from_configuration(configuration)
    service = _service(cluster, server, node)
    try:
        outcome = undo_process_fault(cluster, service,
                                     process_record(cluster, service, "start_server"),
                                     strike=False)
    except ClusterError as exc:
        raise ActivityFailed(f"start_server: {exc}") from None
    address, port = _healthcheck_endpoint(cluster, server, node)
    poll_until(f"{service.name} answering",
               lambda: clusters.swift.admin.answers_healthcheck(address, port), timeout_s, 0.2,
               error=ActivityFailed,
               message=f"{service.name} started but not answering on {address}:{port} after "
                       f"{timeout_s:.0f} s")
    ledger_restored(cluster, f"daemon:{service.name}")
    return {**restore_report([outcome]), "service": service.name, "node": service.node,
            "started": outcome["started_by_restore"]}


def _healthcheck_endpoint(cluster: Cluster, server: str, node: str) -> tuple[str, int]:
    """Where the inventory says `server` on `node` answers: the proxy at the auth URL's host
    and port, a storage server at its node's address and the cluster's port for it. Never an
    address an experiment names."""
    if server == "proxy":
        endpoint = proxy_address(cluster)
        if endpoint is None:
            raise ActivityFailed(f"{cluster.name} has no client.auth_url: the proxy's address "
                                 "is not in the inventory")
        return endpoint
    ports = {**DEFAULT_PORTS, **(cluster.client.get("ports") or {})}
    return cluster.node(node).address, int(ports[server])


def answers_healthcheck(server: str = "object", node: str = "node1",
                        configuration: dict = None) -> bool:
    """Whether Swift `server` ("object", "container", "account" or "proxy") on inventory node
    `node` answers GET /healthcheck with OK. It reaches only where the inventory says that
    server listens: it takes no address or port, so it cannot probe anything else."""
    cluster = cluster_from_configuration(configuration)
    _service(cluster, server, node)  # ActivityFailed naming an unknown server or node
    address, port = _healthcheck_endpoint(cluster, server, node)
    return clusters.swift.admin.answers_healthcheck(address, port)


def _scale_device(cluster: Cluster, arguments: dict, zone: int = 0) -> new_device.ScaleDevice:
    keys = ("device", "size_mib", "weight", "rings", "image_dir")
    return new_device.scale_device(cluster, arguments.get("node", "node1"), zone=zone,
                                    **{k: arguments[k] for k in keys if k in arguments})


@fault_action
def add_device(node: str = "node1", device: str = "", size_mib: int = 1024,
               weight: float = 100, rings: list = None, image_dir: str = "",
               settle_timeout_s: float = 300, allow_unavailable: bool = False,
               configuration: dict = None) -> dict:
    """Scale out: make a new loop-mounted XFS disk of size_mib on storage node `node`, in
    its devices directory, named `device` (scale-<node> by default); add it to the `rings`
    (["object"] by default) with `weight` in the node's zone, rebalance, and push the rings
    to every storage node (servers read them within 15 s). Waits first, up to
    settle_timeout_s, until an earlier ring change's data has moved. Returns the device, its
    partitions per ring, when the rings were pushed, and the guard's verdict."""
    cluster = cluster_of(configuration)
    arguments = {"node": node, "device": device, "size_mib": size_mib, "weight": weight,
                 "rings": ["object"] if rings is None else rings, "image_dir": image_dir}
    try:
        _scale_device(cluster, arguments)  # bad input is refused before the cluster is asked
        with SwiftAdmin(cluster) as admin:
            zones = {d.ip: d.zone for d in admin.ring_facts().devices["object"]}
        dev = _scale_device(cluster, arguments, new_device.zone_number(cluster, node, zones))
        standing = scale_steps.device_in_rings(cluster, dev)
        there = [ring for ring, seen in standing.items() if seen["present"]]
        if there:
            raise InvalidScale(f"{dev.device} on {node} is in the {', '.join(there)} ring(s) "
                               "already (remove_device first)")
        left = scale_steps.present_on_node(cluster, dev)
        if left:
            what = " and ".join({"mounted": "mount", "image": "image"}[w] for w in left)
            raise InvalidScale(f"{dev.device} on {node} is in no ring, but its {what} "
                               f"{'are' if len(left) > 1 else 'is'} there already (left by a "
                               "killed run? faultline heal, or remove_device)")
        verdict = check_blast_radius(cluster, f"add {dev.device} to {node}", allow_unavailable)
        scale_steps.finish_push(cluster)  # of a run killed while it pushed the rings
        scale_steps.wait_until_settled(cluster, settle_timeout_s)
    except ClusterError as exc:
        raise fail("add_device", exc) from None
    ledger_before(cluster, f"scale:{node}/{dev.device}", dev.says(),
                  "actions.swift.remove_device", {"node": node, "device": dev.device},
                  {"image_dir": image_dir})
    try:
        scale_steps.make_device(cluster, dev)
        changed = scale_steps.change_rings(cluster, dev, "add", dev.weight)
    except ClusterError as exc:
        raise fail("add_device", exc) from None
    return {"node": node, "device": dev.device, "mount": dev.mount, "image": dev.image,
            "weight": dev.weight, "partitions": {r: s["parts"] for r, s in
                                                 changed["rings"].items()},
            "pushed_at": changed["pushed_at"], "pushed_to": changed["pushed_to"],
            "guard": verdict}


def remove_device(node: str = "node1", device: str = "", timeout_s: float = 900,
                  configuration: dict = None) -> dict:
    """Scale in (the restore of add_device): drain the device scale added (weight 0 in every
    ring it is in, rebalance, push), wait up to timeout_s until replication has moved every
    partition off it, remove it from the rings, push, unmount it and delete its image.
    Idempotent: picks up wherever an interrupted run left it (a push it did not finish is
    finished first); a scale- device in no ring is deleted only if the fault ledger says
    scale added it. Refuses a device scale did not add, and one whose drain the guard
    refuses (its data would be left with too few copies). Where its image is comes from the
    ledger's record of add_device (else the inventory's directory), never from the caller.
    Returns how long the drain took and what was removed."""
    cluster = cluster_of(configuration)
    try:
        name = new_device.device_name(node, device) if isinstance(node, str) else device
        key = f"scale:{node}/{name}"
        dev = _scale_device(cluster, {"node": node, "device": device,
                                      "image_dir": _recorded_image_dir(cluster, key)})
        standing = scale_steps.device_in_rings(cluster, dev)
        scale_steps.check_ours(dev, standing)
        # a run killed while it pushed: the builders say what the nodes should have
        pushed_at = scale_steps.finish_push(cluster)
        done = _drain_and_remove(cluster, dev, standing, timeout_s, pushed_at)
        done["deleted"] = _delete_if_ours(cluster, dev, key, done["removed_from"])
    except ClusterError as exc:
        raise fail("remove_device", exc) from None
    ledger_restored(cluster, key)
    return {"node": node, "device": dev.device, **done}


def _recorded_image_dir(cluster: Cluster, key: str) -> str:
    """The image directory add_device recorded for the device ("": the inventory's, the
    directory of the node's Swift disk image); scale_device checks it is absolute and
    normalised, and the image deleted is always <it>/<device>.img."""
    image_dir = (recorded(cluster, key) or {}).get("image_dir") or ""
    try:
        return new_device.check_image_dir(image_dir) if image_dir else ""
    except InvalidScale:
        raise refused_record("remove_device", key, f"names image_dir {image_dir!r}, not a "
                             "normalised absolute path") from None


def _delete_if_ours(cluster: Cluster, dev: new_device.ScaleDevice, key: str,
                    removed_from: list) -> list[str]:
    """Delete the device on its node if it was in the rings, or, in none, if the ledger
    says scale added it (a killed run's); a scale- device that is neither is left alone."""
    if removed_from or any(e.key == key for e in fault_ledger.outstanding(cluster.name)):
        return scale_steps.delete_device(cluster, dev)
    return []


def _drain_and_remove(cluster: Cluster, dev: new_device.ScaleDevice, standing: dict,
                      timeout_s: float, pushed_at: float | None = None) -> dict:
    rings = tuple(ring for ring, seen in standing.items() if seen["present"])
    if not rings:
        return {"drained_s": None, "removed_from": [], "guard": None}
    dev = dataclasses.replace(dev, rings=rings)
    # its copies move away and then it is unmounted and deleted: only if the others suffice
    verdict = check_blast_radius(cluster, f"drain and remove {dev.device} on {dev.node}",
                                 False, swift_keys={f"{r}:{dev.node}/{dev.device}"
                                                    for r in rings})
    # drained by an earlier, killed run (since the rings it pushed were read)
    since = pushed_at or time.time() - new_device.RING_RELOAD_S
    if any(standing[ring]["weight"] for ring in rings):
        scale_steps.wait_until_settled(cluster, timeout_s)
        since = scale_steps.change_rings(cluster, dev, "weight", 0.0)["pushed_at"]
    drained = scale_steps.wait_until_moved(cluster, since, timeout_s, drained=dev)
    scale_steps.change_rings(cluster, dev, "remove")
    return {"drained_s": drained["moved_s"], "removed_from": list(rings), "guard": verdict}


def _server_scope(does: str, how: str):
    def scope(cluster: Cluster, a: dict) -> Scope:
        server, node = str(a["server"]), str(a["node"])
        if server == "proxy":
            return Scope(f"{does} the proxy-server {how}")
        cluster.node(node)
        keys = {f"{server}:{d.node}/{d.swift_device}" for d in cluster.disks_on(node)
                if d.swift_device}
        return Scope(f"{does} {server}-server.{node} {where(node)} {how}", keys=frozenset(keys))
    return scope


def _add_device_scope(cluster: Cluster, a: dict) -> Scope:
    dev = _scale_device(cluster, {k: v for k, v in a.items() if v is not None})
    return Scope(f"scales out: adds {dev.says()}, rebalanced and pushed to every node (takes "
                 "nothing down; data moves onto it)")


FAULTS = {
    "kill_server": Fault("start_server", _server_scope("kills", "(SIGKILL)")),
    "hang_server": Fault("resume_server", _server_scope("hangs", SIGSTOP)),
    "add_device": Fault("remove_device", _add_device_scope, notes={"swift": (
        "Adding a device is no fault: Swift reports nothing (no detection, no redundancy "
        "lost), so the scale figures are the data movement and the clients' disruption. The "
        "servers read a pushed ring within 15 s; until replication has moved a partition to "
        "its new primary, reads that land there miss and the proxy tries the next copy.")},
        takes_down=False),
}
