"""The two ways in: discover a Ceph cluster through its monitors, a Swift cluster from its
ring files. Input is checked before anything is asked; every error is a ClusterError
(InventoryError for bad input, NodeUnreachable for monitors that do not answer)."""

from __future__ import annotations

import socket
from pathlib import Path

from clusters.ceph.admin import CephAdmin
from clusters.discovery.ceph import CephSource, ceph_draft, read_ceph_facts
from clusters.discovery.draft import DraftCluster
from clusters.discovery.reach import Reach, check_reach
from clusters.discovery.rings import read_rings, ring_files
from clusters.discovery.swift import SwiftSource, swift_draft
from clusters.exceptions import InventoryError


def discover_ceph(source: CephSource, reach: Reach, name: str, client_id: str | None = None,
                  zone_type: str | None = None, timeout_s: float = 10.0) -> DraftCluster:
    check_reach(reach)
    problems = []
    if not (source.conf or source.mon_host):
        problems.append("give the monitors' address (--mon) or a ceph.conf (--conf)")
    for what, path in (("ceph.conf", source.conf), ("keyring", source.keyring)):
        if path and not Path(path).is_file():
            problems.append(f"the {what} {path} does not exist")
    if problems:
        raise InventoryError("; ".join(problems))
    absolute = CephSource(conf=_absolute(source.conf), mon_host=source.mon_host,
                          keyring=_absolute(source.keyring), pool=source.pool)
    with CephAdmin(absolute.conf, absolute.keyring, timeout=timeout_s,
                   mon_host=source.mon_host, client_id=client_id,
                   bounded_connect=True) as admin:
        facts = read_ceph_facts(admin)
    return ceph_draft(facts, absolute, reach, name, is_local_address, zone_type)


def discover_swift(paths: list[str], source: SwiftSource, reach: Reach,
                   name: str) -> DraftCluster:
    """`paths`: ring files or directories of them; `source.swift_dir` is filled in (the
    object ring's directory) and `source.swift_conf` too if a swift.conf sits there."""
    check_reach(reach)
    files = ring_files(paths)
    if source.key_file and not Path(source.key_file).is_file():
        raise InventoryError(f"the key file {source.key_file} does not exist")
    swift_dir = next((f.parent for f in files if f.name == "object.ring.gz"), files[0].parent)
    beside = swift_dir / "swift.conf"
    found = SwiftSource(swift_dir=str(swift_dir.resolve()),
                        swift_conf=_absolute(source.swift_conf) or (
                            str(beside.resolve()) if beside.is_file() else None),
                        auth_url=source.auth_url, user=source.user,
                        key_file=_absolute(source.key_file), key_env=source.key_env)
    return swift_draft(read_rings(files), found, reach, name)


def is_local_address(ip: str) -> bool:
    """Whether `ip` is an address of this machine (a socket can be bound to it)."""
    try:
        with socket.socket(socket.AF_INET6 if ":" in ip else socket.AF_INET) as probe:
            probe.bind((ip, 0))
        return True
    except (OSError, ValueError):
        return False


def _absolute(path: str | None) -> str | None:
    return str(Path(path).expanduser().resolve()) if path else None
