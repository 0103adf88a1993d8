"""Swift faults and their restores, as Chaos Toolkit actions.

Servers are signalled by PID on the node that runs them (over SSH), as the
inventory describes them (`<type>-server.<node>`, and `proxy-server`); nothing
is matched by process name. kill_server takes an `intent`, "down" (the default) or
"crash", as actions.ceph.kill_osd does (clusters/supervision.py): Debian's Swift units
restart a killed server too.
"""

from __future__ import annotations

import time

from chaoslib.exceptions import ActivityFailed

from clusters import services
from clusters.config import cluster_from_configuration
from clusters.exceptions import ClusterError
from clusters.inventory import Cluster, Service
from clusters.swift_admin import DEFAULT_PORTS, SwiftAdmin, answers_healthcheck, proxy_address

from .safety import (
    check_blast_radius,
    check_intent,
    inject_process_fault,
    ledger_before,
    ledger_restored,
    restore_report,
    undo_process_fault,
)

__all__ = ["kill_server", "start_server", "hang_server", "resume_server"]

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
    """Before a run: the server exists and its node holds a device of the ring."""
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
                 fault: dict = None, configuration: dict = None) -> dict:
    """Start a Swift server again (the restore of kill_server), undoing what kill_server did
    (`fault`, else the fault ledger's record), and wait until it answers its healthcheck.
    Starting a running server changes nothing. Reports as actions.ceph.start_osd does."""
    cluster = cluster_from_configuration(configuration)
    service = _service(cluster, server, node)
    try:
        outcome = undo_process_fault(cluster, service, fault, strike=False)
    except ClusterError as exc:
        raise ActivityFailed(f"start_server: {exc}") from None
    if server == "proxy":
        address, port = proxy_address(cluster) or ("127.0.0.1", 80)
    else:
        ports = {**DEFAULT_PORTS, **(cluster.client.get("ports") or {})}
        address, port = cluster.node(node).address, ports[server]
    deadline = time.monotonic() + timeout_s
    while not answers_healthcheck(address, port):
        if time.monotonic() > deadline:
            raise ActivityFailed(f"{service.name} started but not answering on "
                                 f"{address}:{port} after {timeout_s:.0f} s")
        time.sleep(0.2)
    ledger_restored(cluster, f"daemon:{service.name}")
    return {**restore_report([outcome]), "service": service.name, "node": service.node,
            "started": outcome["started_by_restore"]}
