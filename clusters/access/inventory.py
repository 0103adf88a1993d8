"""The inventory: named clusters, their nodes, disks, services and client access.

An inventory is a YAML file with one top-level key, `clusters`, mapping a
cluster name to its description:

    clusters:
      lab-ceph:
        kind: ceph                      # ceph | swift
        chaos: allowed                  # allowed | protected: whether it takes faults
        release: reef                   # optional: the release it runs, kept with each run
        ssh:                            # defaults for every node
          user: root
          port: 22
          key_file: /path/id_ed25519
          known_hosts: /path/known_hosts  # the nodes' host keys; a key not there is refused
          host_keys: verify             # or tofu: trust a node's first key, refuse a change
        nodes:
          - {name: node1, address: 10.77.0.11, zone: zone1}
        disks:
          - {node: node1, device: /dev/sdb, mount: /var/lib/ceph/osd/ceph-0, osd: 0}
        services:
          - name: osd.0
            kind: osd
            node: node1
            pid_file: /run/ceph/ceph-osd.0.pid    # or: unit: ceph-osd@0
            start: ceph-osd -i 0                  # with pid_file; systemd units start themselves
        client:
          conf: /etc/ceph/ceph.conf
          keyring: null                 # a path; never the key itself
          pool: faultline
          prometheus: http://10.77.0.11:9283/metrics   # the mgr's prometheus module, if on

`chaos` says whether faults may be injected into the cluster. A cluster that does not say
`allowed` is `protected`, as a storage operator expects of a cluster nobody marked: a
protected cluster refuses every fault (its probes, restores and heals still work). The one
exception is a cluster that says neither and is a lab (`lab: true`, written by
`faultline lab up` on this machine, which now writes `chaos: allowed` itself): labs made
before the field existed keep taking faults.

Secrets are only ever referenced by path. Loading validates everything and
reports every problem at once, so a bad file gives one clear message.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from clusters.exceptions import InventoryError, UnknownCluster

KINDS = ("ceph", "swift")
HOST_KEY_MODES = ("verify", "tofu")
CHAOS = ("allowed", "protected")  # a cluster's `chaos`: does it take faults
PLAIN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")  # a node's name
# what goes into commands run on a node is checked for its shape here, once, besides being
# quoted where it is used: a unit name (systemd's escapes included), an absolute path of
# plain characters with no '..', a host name or an IP address
PLAIN_USER = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]*")
UNIT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9:_.@\\-]*")
PLAIN_PATH = re.compile(r"/[A-Za-z0-9._/@:+,=~-]*")
HOST_NAME = re.compile(r"[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*"
                       r"[A-Za-z0-9])?)*")
SHAPES = {
    "name": (PLAIN_NAME, "letters, digits, '.', '_' or '-'"),
    "unit": (UNIT_NAME, "a systemd unit name: letters, digits, ':', '_', '.', '@', '\\' or '-'"),
    "path": (PLAIN_PATH, "an absolute path of letters, digits and . _ / @ : + , = ~ -, "
                         "with no '..'"),
}


@dataclass(frozen=True)
class SshAccess:
    user: str = "root"
    port: int = 22
    key_file: str | None = None
    known_hosts: str | None = None
    # "verify": every node's key must be in known_hosts; "tofu": a node not there yet has its
    # first key recorded under FAULTLINE_HOME (clusters/access/host_keys.py), a changed key refused
    host_keys: str = "verify"
    verify_host_keys: bool = True  # kept so older inventories load; false is refused


@dataclass(frozen=True)
class Node:
    name: str
    address: str
    zone: str | None = None
    ssh: SshAccess = field(default_factory=SshAccess)
    netns: str | None = None  # lab only: the network namespace that is this node
    # pid-file lab only: the node's memory cgroup (lab/memcg.py), where its daemons run
    memory_cgroup: str | None = None
    # how to power the node off and on (clusters/faults/power.py): {"type": "ipmi", "address": BMC,
    # "user": ..., "password_file": ..., optional "port", "interface", "cipher_suite"};
    # {"type": "ssh"} (stop its storage daemons and drop its traffic); none: the lab's
    # namespace if `netns`, else "ssh"
    power: dict | None = None


@dataclass(frozen=True)
class Disk:
    node: str
    device: str
    mount: str
    osd: int | None = None
    swift_device: str | None = None


@dataclass(frozen=True)
class Service:
    name: str
    kind: str
    node: str | None  # None: runs on the machine Faultline runs on
    pid_file: str | None = None
    unit: str | None = None
    start: str | None = None
    program: str | None = None  # binary name, to tell our daemon from a reused PID
    # what supervises it (clusters/faults/supervision.py): "pid_file" (nothing restarts it),
    # "systemd" (its unit, with the unit's Restart= policy) or "cephadm" (the unit
    # ceph-<fsid>@<name>.service, fsid from client.fsid unless `unit` names it); by default
    # "systemd" if it has a unit, else "pid_file"
    managed_by: str | None = None

    @property
    def supervisor(self) -> str:
        return self.managed_by or ("systemd" if self.unit else "pid_file")


@dataclass(frozen=True)
class Cluster:
    name: str
    kind: str
    nodes: tuple[Node, ...]
    disks: tuple[Disk, ...] = ()
    services: tuple[Service, ...] = ()
    client: dict[str, Any] = field(default_factory=dict)
    lab: bool = False
    release: str | None = None  # e.g. "reef": what runs there, said next to its figures
    chaos: str = "protected"  # "allowed": faults may be injected (clusters.safety.protection)

    @property
    def protected(self) -> bool:
        return self.chaos != "allowed"

    def node(self, name: str) -> Node:
        for node in self.nodes:
            if node.name == name:
                return node
        raise UnknownCluster(
            f"cluster {self.name!r} has no node {name!r} (nodes: {', '.join(self.node_names)})"
        )

    @property
    def node_names(self) -> list[str]:
        return [n.name for n in self.nodes]

    def service(self, name: str) -> Service:
        for service in self.services:
            if service.name == name:
                return service
        known = ", ".join(s.name for s in self.services)
        raise UnknownCluster(f"cluster {self.name!r} has no service {name!r} (known: {known})")

    def services_of_kind(self, kind: str) -> list[Service]:
        return [s for s in self.services if s.kind == kind]

    def services_on(self, node: str) -> list[Service]:
        return [s for s in self.services if s.node == node]

    def disks_on(self, node: str) -> list[Disk]:
        return [d for d in self.disks if d.node == node]

    @property
    def zones(self) -> list[str]:
        return sorted({n.zone for n in self.nodes if n.zone})

    def nodes_in_zone(self, zone: str) -> list[Node]:
        nodes = [n for n in self.nodes if n.zone == zone]
        if not nodes:
            raise UnknownCluster(f"cluster {self.name!r} has no zone {zone!r} "
                                 f"(zones: {', '.join(self.zones) or 'none'})")
        return nodes


def load_inventory(path: str | Path) -> dict[str, Cluster]:
    """Read and validate an inventory file; raise InventoryError listing every problem."""
    path = Path(path)
    try:
        raw = yaml.safe_load(path.read_text())
    except FileNotFoundError:
        raise InventoryError(
            f"inventory {path} does not exist (run `faultline lab up` or set FAULTLINE_INVENTORY)"
        ) from None
    except yaml.YAMLError as exc:
        raise InventoryError(f"inventory {path} is not valid YAML: {exc}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InventoryError(f"cannot read inventory {path}: {exc}") from None
    return parse_inventory(raw, source=str(path))


def load_cluster(path: str | Path, name: str) -> Cluster:
    clusters = load_inventory(path)
    if name not in clusters:
        known = ", ".join(sorted(clusters)) or "none"
        raise UnknownCluster(f"unknown cluster {name!r} in {path} (known: {known})")
    return clusters[name]


def parse_inventory(raw: Any, source: str = "inventory") -> dict[str, Cluster]:
    problems: list[str] = []
    if not isinstance(raw, dict) or not isinstance(raw.get("clusters"), dict):
        raise InventoryError(f"{source}: expected a mapping with a 'clusters' mapping at the top")
    clusters = {}
    for name, spec in raw["clusters"].items():
        cluster = _parse_cluster(str(name), spec, problems)
        if cluster is not None:
            clusters[cluster.name] = cluster
    if problems:
        raise InventoryError(f"{source} is malformed: " + "; ".join(problems))
    return clusters


def _parse_cluster(name: str, spec: Any, problems: list[str]) -> Cluster | None:
    where = f"cluster {name!r}"
    if not isinstance(spec, dict):
        problems.append(f"{where}: expected a mapping")
        return None
    kind = spec.get("kind")
    if kind not in KINDS:
        problems.append(f"{where}: kind must be one of {', '.join(KINDS)}, not {kind!r}")
    ssh_defaults = spec.get("ssh") or {}
    if not isinstance(ssh_defaults, dict):
        problems.append(f"{where}: ssh must be a mapping")
        ssh_defaults = {}
    nodes = [_parse_node(where, n, ssh_defaults, problems) for n in _list(spec, "nodes", where,
                                                                          problems)]
    nodes = [n for n in nodes if n is not None]
    if not nodes:
        problems.append(f"{where}: needs at least one node")
    node_names = {n.name for n in nodes}
    if len(node_names) != len(nodes):
        problems.append(f"{where}: node names must be unique")
    disks = []
    for d in _list(spec, "disks", where, problems):
        disk = _build(Disk, d, f"{where} disk", problems)
        if disk is not None:
            if disk.node not in node_names:
                problems.append(f"{where}: disk {disk.device} is on unknown node {disk.node!r}")
            problems.extend(_disk_problems(where, disk))
            disks.append(disk)
    services = []
    for s in _list(spec, "services", where, problems):
        service = _build(Service, {"node": None, **s} if isinstance(s, dict) else s,
                         f"{where} service", problems)
        if service is None:
            continue
        if service.node is not None and service.node not in node_names:
            problems.append(f"{where}: service {service.name} is on unknown node {service.node!r}")
        problems.extend(_service_problems(where, service, spec.get("client")))
        problems.extend(_shape_problems_of_service(where, service))
        if service.name in {s.name for s in services}:
            problems.append(f"{where}: service {service.name} is listed twice")
        services.append(service)
    client = spec.get("client") or {}
    if not isinstance(client, dict):
        problems.append(f"{where}: client must be a mapping")
        client = {}
    if kind == "ceph" and "conf" not in client:
        problems.append(f"{where}: client.conf (path of ceph.conf) is required")
    metrics = metrics_url_problem("client.prometheus", client.get("prometheus"))
    if metrics:  # what Prometheus scrapes for this cluster (cluster_targets)
        problems.append(f"{where}: {metrics}")
    ring_dir = shape_problem("client.node_swift_dir", client.get("node_swift_dir"), "path")
    if ring_dir:  # where scale writes the rings on each node
        problems.append(f"{where}: {ring_dir}")
    chaos = chaos_of(where, spec, problems)
    return Cluster(name=name, kind=str(kind), nodes=tuple(nodes), disks=tuple(disks),
                   services=tuple(services), client=dict(client), lab=bool(spec.get("lab")),
                   release=str(spec["release"]) if spec.get("release") else None,
                   chaos=chaos)


def chaos_of(where: str, spec: dict, problems: list[str]) -> str:
    """A cluster's `chaos`: as written, else "allowed" for a lab and "protected" otherwise."""
    if "chaos" not in spec or spec["chaos"] is None:
        return "allowed" if spec.get("lab") is True else "protected"
    if spec["chaos"] not in CHAOS:
        problems.append(f"{where}: chaos must be allowed or protected, not {spec['chaos']!r}")
        return "protected"
    return str(spec["chaos"])


MANAGERS = ("pid_file", "systemd", "cephadm")


def shape_problem(what: str, value: Any, shape: str) -> str | None:
    """None if `value` (None or a string) has the shape; else the problem, naming `what`."""
    if value is None or value == "TODO":  # discovery's marker of what it could not learn
        return None
    pattern, says = SHAPES[shape]
    text = value if isinstance(value, str) else None
    if text is None or not pattern.fullmatch(text) or (
            shape == "path" and ".." in text.split("/")):
        return f"{what} {value!r} must be {says} (it goes into commands run on the node)"
    return None


def address_problem(what: str, value: str) -> str | None:
    """None for an IP address or a host name; else the problem."""
    try:
        ipaddress.ip_address(value)
        return None
    except ValueError:
        pass
    if HOST_NAME.fullmatch(value) and len(value) <= 253:
        return None
    return f"{what} {value!r} must be an IP address or a host name"


def metrics_url_problem(what: str, value: Any) -> str | None:
    """None for no value or a plain http(s) URL of a host; else the problem."""
    if value is None:
        return None
    says = f"{what} {value!r} must be an http:// or https:// URL of a metrics endpoint"
    if not isinstance(value, str):
        return says
    try:
        url = urlsplit(value)
        port = url.port
    except ValueError:
        return says
    if url.scheme not in ("http", "https") or not url.hostname or url.query or url.fragment:
        return says
    if url.username is not None or url.password is not None:
        return f"{what} must not carry credentials"
    host = address_problem(what, url.hostname)
    return host or (says if port == 0 else None)


def _disk_problems(where: str, disk: Disk) -> list[str]:
    checks = ((f"disk {disk.device!r} device", disk.device, "path"),
              (f"disk {disk.device!r} mount", disk.mount, "path"),
              (f"disk {disk.device!r} swift_device", disk.swift_device, "name"))
    problems = [shape_problem(what, value, shape) for what, value, shape in checks]
    if disk.osd is not None and (isinstance(disk.osd, bool) or not isinstance(disk.osd, int)
                                 or disk.osd < 0):
        problems.append(f"disk {disk.device!r} osd must be a whole number >= 0, "
                        f"not {disk.osd!r}")
    return [f"{where}: {p}" for p in problems if p]


def _shape_problems_of_service(where: str, service: Service) -> list[str]:
    name = f"service {service.name!r}"
    checks = ((name, service.name, "name"), (f"{name} unit", service.unit, "unit"),
              (f"{name} pid_file", service.pid_file, "path"),
              (f"{name} program", service.program, "name"),
              (f"{name} kind", service.kind, "name"))
    problems = [shape_problem(what, value, shape) for what, value, shape in checks]
    return [f"{where}: {p}" for p in problems if p]


def _service_problems(where: str, service: Service, client: Any) -> list[str]:
    """What a service lacks for the way it is managed."""
    name = f"{where}: service {service.name}"
    if service.managed_by not in (None, *MANAGERS):
        return [f"{name}: managed_by must be one of {', '.join(MANAGERS)}, "
                f"not {service.managed_by!r}"]
    fsid = client.get("fsid") if isinstance(client, dict) else None
    if service.managed_by == "cephadm" and not (service.unit or fsid):
        return [f"{name} (cephadm) needs a unit or the cluster's client.fsid"]
    if service.managed_by == "systemd" and not service.unit:
        return [f"{name} (systemd) needs a unit"]
    if service.managed_by == "pid_file" and not service.pid_file:
        return [f"{name} (pid_file) needs a pid_file"]
    if service.managed_by is None and not (service.pid_file or service.unit):
        return [f"{name} needs a pid_file or a unit"]
    return []


def _ipmi_problems(where: str, power: dict) -> list[str]:
    """The optional ipmitool settings of a BMC: its UDP port (623 if unset), its interface
    (lanplus if unset) and cipher suite (-C; 3 if unset, so ipmitool skips its 10 s probe)."""
    problems = []
    if power.get("cipher_suite") == 0 and power.get("cipher_suite") is not False:
        problems.append(f"{where}: cipher_suite 0 is refused: it authenticates nothing "
                        "(anyone on the BMC's network can power the node off); use 3 (the "
                        "default) or 17")
    for key, low, high in (("port", 1, 65535), ("cipher_suite", 1, 17)):
        value = power.get(key)
        if key == "cipher_suite" and value == 0 and value is not False:
            continue  # said above
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                  or not low <= value <= high):
            problems.append(f"{where}: {key} must be a whole number {low}..{high}, "
                            f"not {value!r}")
    address = power.get("address")
    if isinstance(address, str) and address:
        problems.append(address_problem(f"{where}: address", address))
    user = power.get("user")
    if user is not None and not (isinstance(user, str) and PLAIN_USER.fullmatch(user)):
        problems.append(f"{where}: user {user!r} must be letters, digits, '.', '_' or '-'")
    problems = [p for p in problems if p]
    if power.get("interface", "lanplus") not in ("lan", "lanplus"):
        problems.append(f"{where}: interface must be lan or lanplus, not "
                        f"{power['interface']!r}")
    return problems


def _parse_node(where: str, raw: Any, ssh_defaults: dict, problems: list[str]) -> Node | None:
    if not isinstance(raw, dict):
        problems.append(f"{where}: each node must be a mapping")
        return None
    missing = [k for k in ("name", "address") if not raw.get(k)]
    if missing:
        problems.append(f"{where}: a node lacks {', '.join(missing)}")
        return None
    if not PLAIN_NAME.fullmatch(str(raw["name"])):
        problems.append(f"{where}: node name {raw['name']!r} must be letters, digits, '.', "
                        "'_' or '-' (it goes into unit names, paths and shell commands)")
        return None
    node_ssh = raw.get("ssh") or {}
    if not isinstance(node_ssh, dict):
        problems.append(f"{where}: node {raw['name']} ssh must be a mapping")
        node_ssh = {}
    ssh = _build(SshAccess, {**ssh_defaults, **node_ssh},
                 f"{where} node {raw['name']} ssh", problems) or SshAccess()
    if isinstance(ssh.port, bool) or not isinstance(ssh.port, int) or not 0 < ssh.port < 65536:
        problems.append(f"{where}: node {raw['name']} ssh port must be 1..65535, "
                        f"not {ssh.port!r}")
    if ssh.verify_host_keys is not True:
        problems.append(f"{where}: node {raw['name']} ssh verify_host_keys: "
                        f"{ssh.verify_host_keys!r} is refused (it took any host key): set "
                        "host_keys: tofu to trust each node's first key and refuse a changed "
                        "one, or give known_hosts")
    if ssh.host_keys not in HOST_KEY_MODES:
        problems.append(f"{where}: node {raw['name']} ssh host_keys must be "
                        f"{' or '.join(HOST_KEY_MODES)}, not {ssh.host_keys!r}")
    power = raw.get("power")
    if power is not None:
        kinds = ("ipmi", "ssh", "netns")
        if not isinstance(power, dict) or power.get("type") not in kinds:
            problems.append(f"{where}: node {raw['name']} power.type must be one of "
                            f"{', '.join(kinds)}, not {power!r}")
        elif power["type"] == "ipmi":
            lacking = [k for k in ("address", "user", "password_file") if not power.get(k)]
            if lacking:
                problems.append(f"{where}: node {raw['name']} power (ipmi) lacks "
                                f"{', '.join(lacking)}")
            problems += _ipmi_problems(f"{where}: node {raw['name']} power (ipmi)", power)
        elif power["type"] == "netns" and not raw.get("netns"):
            problems.append(f"{where}: node {raw['name']} power netns needs the node's netns")
    node = f"{where}: node {raw['name']}"
    found = [address_problem(f"{node} address", str(raw["address"])),
             shape_problem(f"{node} zone", raw.get("zone"), "name"),
             shape_problem(f"{node} netns", raw.get("netns"), "name"),
             shape_problem(f"{node} memory_cgroup", raw.get("memory_cgroup"), "path")]
    problems.extend(p for p in found if p)
    return Node(name=str(raw["name"]), address=str(raw["address"]), zone=raw.get("zone"),
                ssh=ssh, netns=raw.get("netns"), memory_cgroup=raw.get("memory_cgroup"),
                power=power)


def _list(spec: dict, key: str, where: str, problems: list[str]) -> list:
    value = spec.get(key) or []
    if not isinstance(value, list):
        problems.append(f"{where}: {key} must be a list")
        return []
    return value


def _build(cls, raw: Any, where: str, problems: list[str]):
    if not isinstance(raw, dict):
        problems.append(f"{where}: expected a mapping, got {raw!r}")
        return None
    try:
        return cls(**raw)
    except TypeError as exc:
        problems.append(f"{where}: {exc}")
        return None


def write_cluster(path: str | Path, name: str, spec: dict[str, Any]) -> None:
    """Add or replace one cluster in an inventory file, keeping the others."""
    path = Path(path)
    raw: dict[str, Any] = {"clusters": {}}
    if path.exists():
        raw = yaml.safe_load(path.read_text()) or {}
        if not isinstance(raw, dict) or not isinstance(raw.get("clusters") or {}, dict):
            raise InventoryError(f"{path}: expected a mapping with a 'clusters' mapping")
        raw["clusters"] = raw.get("clusters") or {}
    raw["clusters"][name] = spec
    parse_inventory(raw, source=str(path))  # never write a file we could not read back
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(yaml.safe_dump(raw, sort_keys=False))
    tmp.replace(path)


def remove_cluster(path: str | Path, name: str) -> None:
    path = Path(path)
    if not path.exists():
        return
    raw = yaml.safe_load(path.read_text()) or {}
    if name in (raw.get("clusters") or {}):
        del raw["clusters"][name]
        path.write_text(yaml.safe_dump(raw, sort_keys=False))
