"""Discover a Ceph cluster: what its monitors know, turned into an inventory draft.

`read_ceph_facts` asks the monitors and the manager (python-rados, JSON replies); the rest
is pure and unit-tested on captured replies:

- nodes: the CRUSH `host` buckets, each in the zone of the bucket above it (or of the
  `zone_type` asked for), at the public address of its first OSD (`osd metadata`);
- disks: each OSD's device and data directory (`osd metadata`);
- services: OSDs on their hosts; monitors (`mon dump`), managers (`mgr metadata`) and
  gateways (`service dump`, rgw) on the node with their address, or on this machine;
  systemd units from `orch ps` when the orchestrator is cephadm;
- client: the ceph.conf and keyring paths given, the pool, the mgr's Prometheus endpoint.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from clusters.access.services import PROGRAMS
from clusters.ceph.admin import CephAdmin
from clusters.discovery.draft import TODO, DraftCluster, Entry
from clusters.discovery.reach import GUESSED_UNITS, UNKNOWN_BMCS, Daemon, Reach, managed, ssh_entry
from clusters.exceptions import AdminCommandFailed

# the units of Debian's and Ubuntu's ceph packages, when nothing better is known
PACKAGE_UNITS = {"osd": "ceph-osd@{id}", "mon": "ceph-mon@{id}", "mgr": "ceph-mgr@{id}",
                 "rgw": "ceph-radosgw@{entity_tail}"}
PROMETHEUS_PATH = "metrics"


@dataclass(frozen=True)
class CephFacts:
    """The monitors' and manager's JSON replies discovery works from."""

    fsid: str
    osd_tree: dict[str, Any]
    osd_metadata: list[dict[str, Any]]
    mon_dump: dict[str, Any]
    mgr_metadata: list[dict[str, Any]]
    mgr_services: dict[str, Any]
    service_dump: dict[str, Any]
    orch_ps: list[dict[str, Any]] | None  # None: no orchestrator
    orch_reason: str = ""  # why there is none
    mon_metadata: tuple[dict[str, Any], ...] = ()  # the monitors' host names


@dataclass(frozen=True)
class CephSource:
    """What the operator pointed discovery at, written into the client section."""

    conf: str | None
    mon_host: str | None
    keyring: str | None
    pool: str


def read_ceph_facts(admin: CephAdmin) -> CephFacts:
    """Ask a connected cluster everything discovery needs."""
    try:
        orch_ps, orch_reason = admin.mgr_command("orch ps"), ""
    except AdminCommandFailed as exc:  # no orchestrator module or backend: a plain cluster
        orch_ps, orch_reason = None, str(exc)
    return CephFacts(
        fsid=admin.command("fsid")["fsid"], osd_tree=admin.command("osd tree"),
        osd_metadata=admin.command("osd metadata"), mon_dump=admin.command("mon dump"),
        mgr_metadata=admin.command("mgr metadata"),
        mgr_services=admin.command("mgr services") or {},
        service_dump=admin.command("service dump") or {}, orch_ps=orch_ps,
        orch_reason=orch_reason, mon_metadata=tuple(admin.command("mon metadata") or ()))


def address_ip(addr: str) -> str:
    """The IP of a Ceph address: "[v2:10.0.0.1:3300/0,v1:...]", "10.0.0.1:6789/0",
    "10.0.0.1" or "[v2:[fd00::1]:3300/0]"."""
    first = addr.strip("[]").split(",")[0]
    first = re.sub(r"^v[12]:", "", first).split("/")[0]
    if first.startswith("["):  # IPv6 with a port
        return first[1:first.index("]")]
    return first.rsplit(":", 1)[0] if first.count(":") == 1 else first


def ceph_draft(facts: CephFacts, source: CephSource, reach: Reach, name: str,
               is_local: Callable[[str], bool], zone_type: str | None = None) -> DraftCluster:
    """The inventory draft of the cluster described by `facts` (pure)."""
    nodes, disks, notes = _hosts_and_disks(facts, zone_type)
    placer = _Placer(nodes, is_local)
    units = _orchestrator_units(facts)
    services = [_service(d, reach, units, where) for d, where in
                [*_osds(facts, nodes), *_mons(facts, placer), *_mgrs(facts, placer),
                 *_gateways(facts, placer)]]
    if facts.orch_ps is None:
        notes.append(f"no orchestrator ({_first_line(facts.orch_reason)})")
    else:
        notes.append("orchestrator: cephadm (`orch ps`): units are cephadm's")
    if any(s.todos for s in services):
        notes.append(GUESSED_UNITS)
    notes.append(UNKNOWN_BMCS)
    client, hints = _client(facts, source)
    return DraftCluster(
        name=name, kind="ceph",
        origin=f"Ceph cluster {facts.fsid} through its monitors "
               + (f"at {source.mon_host}" if source.mon_host else f"named in {source.conf}"),
        ssh=ssh_entry(reach, "any cluster map"),
        nodes=tuple(nodes.values()) + tuple(placer.added),
        disks=tuple(disks), services=tuple(services), client=client, notes=tuple(notes),
        client_hints=tuple(hints))



def _hosts_and_disks(facts: CephFacts, zone_type: str | None
                     ) -> tuple[dict[str, Entry], list[Entry], list[str]]:
    tree = {n["id"]: n for n in facts.osd_tree.get("nodes", [])}
    parent = {child: n["id"] for n in tree.values() for child in n.get("children", [])}
    metadata = {m["id"]: m for m in facts.osd_metadata}
    nodes: dict[str, Entry] = {}
    disks: list[Entry] = []
    notes: list[str] = []
    for host in (n for n in tree.values() if n["type"] == "host"):
        osds = sorted(c for c in host.get("children", []) if c >= 0)
        known = [i for i in osds if i in metadata]
        if not known:
            notes.append(f"{TODO}: CRUSH host {host['name']} has no OSD that reported its "
                         "metadata; it is left out")
            continue
        zone = _zone_of(host["id"], tree, parent, zone_type)
        first = metadata[known[0]]
        address = address_ip(first.get("front_addr", ""))
        value = {"name": host["name"], "address": address}
        todos = []
        if zone:
            value["zone"] = zone[1]
        else:
            todos.append(f"no {zone_type or 'bucket'} above CRUSH host {host['name']}: "
                         "set its zone")
        where = f" in {zone[0]} {zone[1]}" if zone else ""
        nodes[host["name"]] = Entry(value, f"CRUSH host {host['name']}{where}; address: "
                                           f"osd.{known[0]}'s public one; hostname "
                                           f"{first.get('hostname')}", tuple(todos))
        for osd in osds:
            disks.append(_disk(host["name"], osd, metadata.get(osd)))
    if facts.osd_tree.get("stray"):
        strays = ", ".join(f"osd.{s['id']}" for s in facts.osd_tree["stray"])
        notes.append(f"{TODO}: {strays} not in the CRUSH map, left out")
    return nodes, disks, notes


def _zone_of(bucket: int, tree: dict, parent: dict, zone_type: str | None
             ) -> tuple[str, str] | None:
    """(bucket type, bucket name) of the host's zone: the first ancestor of `zone_type`,
    or with none asked, the bucket right above the host unless that is the root."""
    up = parent.get(bucket)
    while up is not None:
        node = tree[up]
        if zone_type is None:
            return None if node["type"] == "root" else (node["type"], node["name"])
        if node["type"] == zone_type:
            return node["type"], node["name"]
        up = parent.get(up)
    return None


def _disk(host: str, osd: int, meta: dict[str, Any] | None) -> Entry:
    if meta is None:
        return Entry({"node": host, "device": TODO, "mount": f"/var/lib/ceph/osd/ceph-{osd}",
                      "osd": osd}, f"osd.{osd} in CRUSH",
                     (f"osd.{osd} never reported its metadata: set device and mount",))
    devices = [d for d in str(meta.get("devices", "")).split(",") if d]
    value = {"node": host, "device": f"/dev/{devices[0]}" if devices else TODO,
             "mount": meta.get("osd_data") or TODO, "osd": osd}
    todos = [] if devices else [f"osd.{osd} reports no device: set it"]
    if len(devices) > 1:
        todos.append(f"osd.{osd} spans {', '.join(devices)}: keep the one a disk fault "
                     "should fail")
    return Entry(value, f"osd.{osd} metadata: devices {meta.get('devices')}, osd_data",
                 tuple(todos))


class _Placer:
    """Puts a daemon on the node with its address, on this machine, on the node named as
    its hostname, or else on a new node (which then needs a zone)."""

    def __init__(self, nodes: dict[str, Entry], is_local: Callable[[str], bool]):
        self.by_address = {e.value["address"]: name for name, e in nodes.items()}
        self.names = set(nodes)
        self.is_local = is_local
        self.added: list[Entry] = []

    def place(self, ip: str, hostname: str | None) -> tuple[str | None, str]:
        if ip in self.by_address:
            return self.by_address[ip], f"at {ip}, the node's address"
        if self.is_local(ip):
            return None, f"at {ip}, an address of this machine"
        if hostname in self.names:
            return hostname, f"on host {hostname}"
        name = hostname or ip
        self.added.append(Entry({"name": name, "address": ip},
                                f"runs daemons but no OSD (hostname {hostname})",
                                ("not in the CRUSH map: set its zone if it has one",)))
        self.by_address[ip] = name
        self.names.add(name)
        return name, f"at {ip}"


def _osds(facts: CephFacts, nodes: dict[str, Entry]) -> list[tuple[Daemon, str]]:
    found = []
    tree = facts.osd_tree.get("nodes", [])
    for host in (n for n in tree if n["type"] == "host" and n["name"] in nodes):
        for osd in sorted(c for c in host.get("children", []) if c >= 0):
            found.append((Daemon(f"osd.{osd}", "osd", str(osd), f"osd.{osd}", host["name"],
                                 PROGRAMS["osd"], facts.fsid), "CRUSH"))
    return found


def _mons(facts: CephFacts, placer: _Placer) -> list[tuple[Daemon, str]]:
    found = []
    hostnames = {m.get("name"): m.get("hostname") for m in facts.mon_metadata}
    for mon in facts.mon_dump.get("mons", []):
        addr = mon.get("public_addr") or mon.get("addr", "")
        node, where = placer.place(address_ip(addr), hostnames.get(mon["name"]))
        found.append((Daemon(f"mon.{mon['name']}", "mon", mon["name"], f"mon.{mon['name']}",
                             node, PROGRAMS["mon"], facts.fsid), f"mon dump, {where}"))
    return found


def _mgrs(facts: CephFacts, placer: _Placer) -> list[tuple[Daemon, str]]:
    found = []
    for mgr in facts.mgr_metadata:
        node, where = placer.place(address_ip(mgr.get("addr", "")), mgr.get("hostname"))
        found.append((Daemon(f"mgr.{mgr['name']}", "mgr", mgr["name"], f"mgr.{mgr['name']}",
                             node, PROGRAMS["mgr"], facts.fsid), f"mgr metadata, {where}"))
    return found


def rgw_daemons(facts: CephFacts) -> list[dict[str, Any]]:
    """The gateways registered in the service map (their daemons' entries)."""
    daemons = facts.service_dump.get("services", {}).get("rgw", {}).get("daemons", {})
    return [d for key, d in sorted(daemons.items()) if key != "summary" and isinstance(d, dict)]


def _gateways(facts: CephFacts, placer: _Placer) -> list[tuple[Daemon, str]]:
    found = []
    for rgw in rgw_daemons(facts):
        meta = rgw.get("metadata", {})
        rgw_id = meta.get("id") or str(rgw.get("gid"))
        node, where = placer.place(address_ip(rgw.get("addr", "")), meta.get("hostname"))
        found.append((Daemon(f"rgw.{rgw_id}", "rgw", rgw_id, f"client.rgw.{rgw_id}", node,
                             PROGRAMS["rgw"], facts.fsid), f"service map, {where}"))
    return found


def _orchestrator_units(facts: CephFacts) -> dict[str, str]:
    """Daemon name -> its systemd unit, as cephadm names them."""
    return {f"{d['daemon_type']}.{d['daemon_id']}":
            f"ceph-{facts.fsid}@{d['daemon_type']}.{d['daemon_id']}"
            for d in facts.orch_ps or [] if d.get("daemon_type") and d.get("daemon_id")}


def _service(daemon: Daemon, reach: Reach, units: dict[str, str], where: str) -> Entry:
    if daemon.name in units:
        unit, source, known = units[daemon.name], "unit from `orch ps` (cephadm)", True
    else:
        unit = PACKAGE_UNITS[daemon.kind].format(
            **daemon.fields(), entity_tail=daemon.entity.removeprefix("client."))
        source, known = "unit guessed from Debian's ceph packages", False
    how, how_source, todos = managed(daemon, reach, unit, source, known)
    value = {"name": daemon.name, "kind": daemon.kind, "node": daemon.node, **how}
    return Entry(value, "; ".join(filter(None, (where, how_source))), todos)


def _client(facts: CephFacts, source: CephSource) -> tuple[Entry, list[str]]:
    value: dict[str, Any] = {"conf": source.conf or "/etc/ceph/ceph.conf",
                             "keyring": source.keyring, "pool": source.pool}
    todos = []
    if not source.conf:
        mons = ",".join(m.get("public_addr", "").split("/")[0]
                        for m in facts.mon_dump.get("mons", []))
        todos.append(f"no ceph.conf was given: Faultline's clients read one; a file with "
                     f"[global] mon_host = {mons} (and the keyring) is enough")
    prometheus = facts.mgr_services.get("prometheus")
    if prometheus:
        value["prometheus"] = prometheus.rstrip("/") + "/" + PROMETHEUS_PATH
    hints = []
    for rgw in rgw_daemons(facts):
        endpoint = rgw_endpoint(rgw)
        if endpoint:
            hints.append(f"{TODO}: RGW {rgw.get('metadata', {}).get('id')} serves {endpoint}; "
                         "for its Swift and S3 APIs add (credentials by path or variable):")
            hints.append(f"swift_api: {{auth_url: {endpoint}/auth/1.0, user: USER, "
                         "key_file: PATH}")
            hints.append(f"s3: {{endpoint: {endpoint}, access_key_file: PATH, "
                         "secret_key_file: PATH}")
            break
    return Entry(value, "the paths given to discovery; pool from --pool; prometheus from "
                        "mgr services", tuple(todos)), hints


def rgw_endpoint(rgw: dict[str, Any]) -> str | None:
    """The gateway's HTTP(S) endpoint from its frontend config ("beast endpoint=IP:PORT",
    "beast port=7480", "beast ssl_endpoint=...")."""
    meta = rgw.get("metadata", {})
    config = meta.get("frontend_config#0", "")
    ip = address_ip(rgw.get("addr", "")) or "127.0.0.1"
    for key, scheme in (("endpoint", "http"), ("port", "http"), ("ssl_endpoint", "https"),
                        ("ssl_port", "https")):
        match = re.search(rf"(?:^|\s){key}=(\S+)", config)
        if match:
            where = match.group(1)
            return f"{scheme}://{where if ':' in where else f'{ip}:{where}'}"
    return None


def _first_line(text: str) -> str:
    return (text.strip().splitlines() or ["no reason given"])[0]
