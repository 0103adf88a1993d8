"""What the operator tells discovery about reaching the nodes and managing the daemons:
what no cluster map holds (SSH access, how each daemon is supervised, disk paths).

Templates are Python format strings over a daemon's fields:

    {name}     the inventory's service name      osd.0, rgw.lab, object-server.node1
    {kind}     its kind                          osd, mon, mgr, rgw, object-server
    {id}       the daemon id                     0, a, x, lab (Swift: the node's name)
    {entity}   Ceph's auth name ($name)          osd.0, client.rgw.lab (Swift: = name)
    {node}     the node it runs on ("" here)     node1
    {program}  the executable                    ceph-osd, radosgw, swift-object-server
    {fsid}     the Ceph cluster's fsid (Swift: "")

e.g. `--pid-file '/run/ceph/ceph-{entity}.pid' --start 'systemctl start ceph-{kind}@{id}'`.
Swift disk templates take {node} and {device} (the ring's device name).
"""

from __future__ import annotations

import re
import shlex
import string
from dataclasses import dataclass
from typing import Any

from clusters.discovery.draft import TODO, Entry
from clusters.exceptions import InventoryError

PLAIN_FIELD = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@:-]*")
DAEMON_FIELDS = ("name", "kind", "id", "entity", "node", "program", "fsid")
DISK_FIELDS = ("node", "device")
GUESSED_UNITS = ("a unit marked TODO is what Debian's packages call it; --unit, or --pid-file "
                 "with --start, write how this cluster supervises its daemons")
UNKNOWN_BMCS = (f"{TODO}: BMC addresses are unknown; power faults stop a node's daemons over SSH "
                "unless a node gets power: {type: ipmi, address: ..., user: ..., "
                "password_file: ...} (optional: port, 623 if unset; interface: lanplus; "
                "cipher_suite: 3, or what the BMC offers, e.g. 17)")


@dataclass(frozen=True)
class Daemon:
    """A daemon as discovery found it, before the inventory says how it is managed."""

    name: str
    kind: str
    id: str
    entity: str
    node: str | None
    program: str
    fsid: str = ""

    def fields(self) -> dict[str, str]:
        return {"name": self.name, "kind": self.kind, "id": self.id, "entity": self.entity,
                "node": self.node or "", "program": self.program, "fsid": self.fsid}


@dataclass(frozen=True)
class Reach:
    """Given on the command line; None: not known, so marked TODO in the output."""

    ssh_user: str | None = None
    ssh_port: int | None = None
    ssh_key: str | None = None
    known_hosts: str | None = None
    unit: str | None = None
    pid_file: str | None = None
    start: str | None = None
    mount: str | None = None  # Swift: where each ring device is mounted
    block_device: str | None = None  # Swift: the block device (or image) of each

    def ssh(self) -> dict[str, Any]:
        given = {"user": self.ssh_user, "port": self.ssh_port, "key_file": self.ssh_key,
                 "known_hosts": self.known_hosts}
        return {k: v for k, v in given.items() if v is not None}

    def manages_daemons(self) -> bool:
        return bool(self.unit or self.pid_file)


def check_reach(reach: Reach) -> None:
    """Raise InventoryError naming every inconsistent or malformed option at once."""
    problems = []
    if reach.unit and (reach.pid_file or reach.start):
        problems.append("--unit and --pid-file/--start exclude each other (a daemon is "
                        "managed by systemd or by a pid file)")
    if reach.pid_file and not reach.start:
        problems.append("--pid-file needs --start (how to start the daemon again after a "
                        "kill)")
    if reach.start and not reach.pid_file and not reach.unit:
        problems.append("--start needs --pid-file (how to find the daemon's process)")
    if reach.ssh_port is not None and not 0 < reach.ssh_port < 65536:
        problems.append(f"--ssh-port must be 1..65535, not {reach.ssh_port}")
    for option, template, fields in (("--unit", reach.unit, DAEMON_FIELDS),
                                     ("--pid-file", reach.pid_file, DAEMON_FIELDS),
                                     ("--start", reach.start, DAEMON_FIELDS),
                                     ("--mount", reach.mount, DISK_FIELDS),
                                     ("--block-device", reach.block_device, DISK_FIELDS)):
        if template is not None:
            problems.extend(_template_problems(option, template, fields))
    if problems:
        raise InventoryError("; ".join(problems))


def _template_problems(option: str, template: str, fields: tuple[str, ...]) -> list[str]:
    try:
        names = {f for _, f, _, _ in string.Formatter().parse(template) if f is not None}
    except ValueError as exc:
        return [f"{option} {template!r} is not a valid template: {exc}"]
    unknown = sorted(names - set(fields))
    if unknown:
        return [f"{option} {template!r} names {', '.join('{' + u + '}' for u in unknown)}; "
                f"known: {', '.join('{' + f + '}' for f in fields)}"]
    try:  # a conversion or format spec the text fields refuse ("{id:d}", "{id!x}")
        template.format(**dict.fromkeys(fields, "x"))
    except ValueError as exc:
        return [f"{option} {template!r} is not a valid template: {exc}"]
    return []


def plain_fields(daemon: Daemon) -> dict[str, str]:
    """The daemon's fields, each checked plain (letters, digits, '.', '_', '-', '@', ':'):
    a cluster map is read from the cluster, and what it names goes into unit names, paths
    and start commands; InventoryError naming the field otherwise."""
    fields = daemon.fields()
    for key, value in fields.items():
        if value and not PLAIN_FIELD.fullmatch(value):
            raise InventoryError(f"discovered {key} {value!r} of {daemon.name!r} is not a "
                                 "plain name (letters, digits, '.', '_', '-', '@', ':'); "
                                 "refusing to write it into unit names, paths or commands")
    return fields


def managed(daemon: Daemon, reach: Reach, default_unit: str, default_source: str,
            default_known: bool) -> tuple[dict[str, Any], str, tuple[str, ...]]:
    """How the inventory manages `daemon`: (fields to add, their source, TODOs).

    The operator's templates win; else `default_unit`: learned (from an orchestrator) when
    `default_known`, else the distribution's usual unit, which then needs review."""
    fields = plain_fields(daemon)
    if reach.unit:
        return {"unit": reach.unit.format(**fields)}, "unit from --unit", ()
    if reach.pid_file:
        # the start command is shell text: each discovered value goes in quoted, as one word
        quoted = {k: shlex.quote(v) if v else "" for k, v in fields.items()}
        return ({"pid_file": reach.pid_file.format(**fields),
                 "start": str(reach.start).format(**quoted)},
                "pid file and start from --pid-file/--start", ())
    if default_known:
        return {"unit": default_unit}, default_source, ()
    return {"unit": default_unit}, "", (f"{default_source}: check",)


def disk_path(template: str, node: str, device: str) -> str:
    return template.format(node=node, device=device)


def ssh_entry(reach: Reach, maps: str) -> Entry:
    """The cluster's ssh mapping: the options given, or a TODO (`maps`: what was read)."""
    given = reach.ssh()
    if given:
        return Entry(given, "from the --ssh-* options")
    return Entry({}, "", (f"how to reach the nodes over SSH is not in {maps}: add ssh: "
                          "{user, port, key_file, known_hosts} (or give --ssh-user, "
                          "--ssh-port, --ssh-key, --known-hosts); root on port 22 meanwhile",))
