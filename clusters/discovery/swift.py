"""Discover a Swift cluster from its rings, turned into an inventory draft (pure).

- nodes: one per storage IP of the rings, named by the devices' `meta` field when it is
  a host name (else node1, node2, ... in address order, to review), in the zone of their
  devices (`zone1`, or `region2-zone1` when there are several regions);
- disks: one per ring device (a device in several rings is one disk);
- services: the object, container and account server of each node that holds devices of
  that ring;
- client: the ring directory, a swift.conf beside it, the servers' ports, the replica
  count, and the proxy's auth URL, user and key reference when given.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from typing import Any

from clusters.discovery.draft import TODO, DraftCluster, Entry
from clusters.discovery.reach import (
    GUESSED_UNITS,
    UNKNOWN_BMCS,
    Daemon,
    Reach,
    disk_path,
    managed,
    ssh_entry,
)

SERVER_TYPES = ("object", "container", "account")
HOST_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
DEFAULT_MOUNT = "/srv/node/{device}"  # Swift's default `devices = /srv/node`
PACKAGE_UNIT = "swift-{type}"  # Debian's units: swift-object, swift-container, swift-account


@dataclass(frozen=True)
class SwiftSource:
    """What the operator pointed discovery at and told it about the proxy."""

    swift_dir: str
    swift_conf: str | None = None
    auth_url: str | None = None
    user: str | None = None
    key_file: str | None = None
    key_env: str | None = None


def swift_draft(rings: dict[str, dict[str, Any]], source: SwiftSource, reach: Reach,
                name: str) -> DraftCluster:
    """The inventory draft of the cluster whose rings are `rings` (pure)."""
    devices = [dict(d, ring=ring) for ring, r in sorted(rings.items()) for d in r["devices"]]
    regions = {d["region"] for d in devices}
    names = _node_names(devices)
    nodes = [_node(ip, names[ip], [d for d in devices if d["ip"] == ip], len(regions) > 1)
             for ip in sorted(names, key=_address_key)]
    disks = _disks(devices, names, reach)
    services = [_server(kind, names[ip][0], reach) for ip in sorted(names, key=_address_key)
                for kind in SERVER_TYPES if any(d["ip"] == ip and _type(d["ring"]) == kind
                                                for d in devices)]
    client, notes = _client(rings, devices, source)
    if any(s.todos for s in services):
        notes.append(GUESSED_UNITS)
    notes += [
        f"{TODO}: the proxy servers are not in the rings: add a service {{name: proxy-server, "
        "kind: proxy-server, node: ..., unit: ...} to fault them",
        f"{TODO}: the replicators, auditors, updaters and rsync of each node are not in the "
        "rings: add them as services if a power fault over SSH should stop them too",
        UNKNOWN_BMCS]
    return DraftCluster(
        name=name, kind="swift", origin=f"the Swift rings in {source.swift_dir} "
                                        f"({', '.join(sorted(rings))})",
        ssh=ssh_entry(reach, "the rings"), nodes=tuple(nodes), disks=tuple(disks),
        services=tuple(services), client=client, notes=tuple(notes))



def _type(ring: str) -> str:
    return ring.split("-")[0]  # object-1 (a storage policy's ring) holds object servers


def _address_key(ip: str):
    try:
        return (0, ipaddress.ip_address(ip))
    except ValueError:
        return (1, ip)


def _node_names(devices: list[dict[str, Any]]) -> dict[str, tuple[str, bool]]:
    """ip -> (name, whether the rings gave it): the devices' one `meta` when it is a host
    name no other node uses, else node<N> by address order."""
    ips = sorted({d["ip"] for d in devices}, key=_address_key)
    metas = {ip: {d.get("meta") or "" for d in devices if d["ip"] == ip} for ip in ips}
    chosen = {ip: next(iter(m)) for ip, m in metas.items()
              if len(m) == 1 and HOST_NAME.match(next(iter(m)))}
    taken = [n for n in chosen.values()]
    names = {}
    for index, ip in enumerate(ips, start=1):
        if ip in chosen and taken.count(chosen[ip]) == 1:
            names[ip] = (chosen[ip], True)
        else:
            names[ip] = (f"node{index}", False)
    return names


def _node(ip: str, name: tuple[str, bool], devices: list[dict[str, Any]],
          regions: bool) -> Entry:
    zones = sorted({(d["region"], d["zone"]) for d in devices})
    region, zone = zones[0]
    value = {"name": name[0], "address": ip,
             "zone": f"region{region}-zone{zone}" if regions else f"zone{zone}"}
    todos = [] if name[1] else ["the rings give no host name: rename the node"]
    if len(zones) > 1:
        todos.append(f"its devices are in several zones ({zones}): keep the node's")
    # a ring written before replication networks (or without one) has none
    replication = {d["replication_ip"] for d in devices if d.get("replication_ip")} - {ip}
    where = f"; replication network {', '.join(sorted(replication))}" if replication else ""
    source = "ring devices' meta" if name[1] else "named by discovery"
    return Entry(value, f"{source}; ring region {region}, zone {zone}{where}", tuple(todos))


def _disks(devices: list[dict[str, Any]], names: dict[str, tuple[str, bool]],
           reach: Reach) -> list[Entry]:
    disks = []
    for ip, device in dict.fromkeys((d["ip"], d["device"]) for d in devices):
        node = names[ip][0]
        rings = [d["ring"] for d in devices if d["ip"] == ip and d["device"] == device]
        todos = []
        if reach.mount:
            mount = disk_path(reach.mount, node, device)
        else:
            mount = disk_path(DEFAULT_MOUNT, node, device)
            todos.append("mount point assumed Swift's default devices = /srv/node "
                         "(or give --mount)")
        if reach.block_device:
            block = disk_path(reach.block_device, node, device)
        else:
            block = TODO
            todos.append("the block device under the mount is not in the rings (or give "
                         "--block-device)")
        disks.append(Entry({"node": node, "device": block, "mount": mount,
                            "swift_device": device}, f"rings {', '.join(rings)}",
                           tuple(todos)))
    return disks


def _server(kind: str, node: str, reach: Reach) -> Entry:
    daemon = Daemon(f"{kind}-server.{node}", f"{kind}-server", node, f"{kind}-server.{node}",
                    node, f"swift-{kind}-server")
    how, how_source, todos = managed(daemon, reach, PACKAGE_UNIT.format(type=kind),
                                     "unit guessed from Debian's swift packages", False)
    value = {"name": daemon.name, "kind": daemon.kind, "node": node, **how,
             "program": daemon.program}
    return Entry(value, f"the {kind} ring has devices on {node}; {how_source}".rstrip("; "),
                 todos)


def _client(rings: dict[str, dict[str, Any]], devices: list[dict[str, Any]],
            source: SwiftSource) -> tuple[Entry, list[str]]:
    value: dict[str, Any] = {}
    todos = []
    given = {"auth_url": source.auth_url, "user": source.user, "key_file": source.key_file,
             "key_env": source.key_env}
    value.update({k: v for k, v in given.items() if v})
    if not (source.auth_url and source.user and (source.key_file or source.key_env)):
        todos.append("the proxy's auth_url, user and key_file or key_env are not in the "
                      "rings (or give --auth-url, --user, --key-file or --key-env)")
    value["swift_dir"] = source.swift_dir
    if source.swift_conf:
        value["swift_conf"] = source.swift_conf
    notes = []
    ports = {}
    for kind in SERVER_TYPES:
        found = sorted({d["port"] for d in devices if _type(d["ring"]) == kind})
        if len(found) == 1:
            ports[kind] = found[0]
        elif found:
            notes.append(f"{TODO}: the {kind} servers listen on several ports "
                         f"({', '.join(map(str, found))}); client.ports.{kind} holds one")
    value["ports"] = ports
    if "object" in rings:
        value["replicas"] = int(rings["object"]["replicas"])
    return Entry(value, "ring directory and swift.conf given or found beside the rings; "
                        "ports and replicas from the rings", tuple(todos)), notes
