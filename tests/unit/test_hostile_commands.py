"""Every value from an inventory or an experiment reaches a shell only quoted: hostile values
go through every command builder, and nothing they carry runs.

Each builder in BUILDERS takes one hostile value and returns the shell text it would run on
a node (the runners among them are captured instead of run over SSH). Each text is checked
two ways:
- statically: split as a POSIX shell splits words, no word is the payload's `touch`;
- for real: run by `sh -c` in a temporary directory whose PATH holds only `sh`, `touch` and
  `dirname` (every other program is "not found", so nothing of a node is touched), and the
  payload's marker file must not exist afterwards.
A new builder is one more entry in BUILDERS.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from clusters.access import node_commands, services
from clusters.access.inventory import Cluster, Disk, Node, Service, parse_inventory
from clusters.access.ssh import CommandResult
from clusters.ceph import new_osd
from clusters.discovery.reach import Daemon, Reach, managed
from clusters.exceptions import InvalidLinkFault, InventoryError
from clusters.faults import (
    cpu_hog,
    disk_faults,
    io_throttle,
    link_faults,
    memory_hog,
    replica_ceph,
    replica_swift,
    supervision,
)
from clusters.faults.corruption import Corruption, swift_replica_state_command, write_bytes_command
from clusters.swift import new_device

MARKER = "MARKER"  # replaced by the test's marker path
PAYLOADS = {
    "semicolon": f"x; touch {MARKER}",
    "command substitution": f"$(touch {MARKER})",
    "backquotes": f"`touch {MARKER}`",
    "single quote": f"x'; touch {MARKER}; echo '",
    "double quote": f"x\"; touch {MARKER}; echo \"",
    "newline": f"x\ntouch {MARKER}",
    "quoted substitution": f"x' \"$(touch {MARKER})\" '",
}


def _node(value: str = "node1") -> Node:
    return Node(name="node1", address="10.0.0.11", memory_cgroup=value)


def _cluster(service: Service) -> Cluster:
    return Cluster(name="c", kind="swift", nodes=(_node(),), services=(service,))


def _corruption(value: str) -> Corruption:
    return Corruption(system="swift", object=value, owned=False, size=64, md5=value,
                      bad_md5=value, offset=3, good="00ff", replica=f"node1/{value}",
                      copies=3, pool=value, pgid=value, node="node1", path=value,
                      mount=value, hash=value)


def _auditor_cluster(value: str) -> Cluster:
    """A node whose auditor starts with the value as an environment variable and its conf."""
    inner = f"X={shlex.quote(value)} swift-object-auditor {shlex.quote(value)}"
    return Cluster(name="c", kind="swift", nodes=(_node(),), services=(Service(
        name="object-auditor.node1", kind="object-auditor", node="node1", pid_file="/p",
        start=f"sh -c {shlex.quote(inner)}"),))


def _new_osd(value: str) -> new_osd.NewOsd:
    return new_osd.NewOsd(osd_id=7, uuid=value, node="node1", zone=value, address=value,
                             size_gib=1, conf=value, image=value, mount=value,
                             pid_file=value, log=value, memory_cgroup=value)


def _link() -> link_faults.LinkFault:
    return link_faults.LinkFault(loss_percent=5, cap_mbit=10, delay_ms=20, node="node1")


Builder = Callable[[str, pytest.MonkeyPatch], list[str]]


def _built(build: Callable[[str], str | list[str]]) -> Builder:
    """A builder that returns its command text (or a list of them)."""
    def commands(value: str, monkeypatch: pytest.MonkeyPatch) -> list[str]:
        built = build(value)
        return list(built) if isinstance(built, list) else [built]
    return commands


def _ran(call: Callable[[str], object], where: str) -> Builder:
    """A runner: `where` (module.attribute, its way to the node) is replaced by a capture of
    the commands it is given, which answers each with exit 0 and no output."""
    def commands(value: str, monkeypatch: pytest.MonkeyPatch) -> list[str]:
        seen: list[str] = []

        def capture(*args, **kwargs):
            seen.append(next(a for a in args if isinstance(a, str)))
            return CommandResult(0, "", "")
        monkeypatch.setattr(where, capture)
        try:
            call(value)
        except Exception:  # noqa: BLE001 - what it does after its commands is not tested here
            pass
        return seen
    return commands


def _service(value: str, **fields) -> Service:
    return Service(name="object-server.node1", kind="object-server", node="node1", **fields)


# name -> value -> the command text(s); a runner's entry takes the monkeypatch too
BUILDERS: dict[str, Builder] = {
    "node_commands.is_mounted": _built(
        lambda v: node_commands.is_mounted(v)),
    "disk_faults.fail_command": _built(
        lambda v: disk_faults.fail_command(Disk("node1", v, v))),
    "disk_faults.restore_command": _built(
        lambda v: disk_faults.restore_command(Disk("node1", v, v))),
    "disk_faults.restore_command(replace)": _built(
        lambda v: disk_faults.restore_command(Disk("node1", v, v), replace=True)),
    "disk_faults.is_healthy_command": _built(
        lambda v: disk_faults.is_healthy_command(Disk("n", v, v))),
    "link_faults.netem_command": _built(
        lambda v: link_faults.netem_command(_link(), v)),
    "link_faults.tbf_command": _built(
        lambda v: link_faults.tbf_command(_link(), v)),
    "link_faults.nft_command": _built(
        lambda v: link_faults.nft_command(v)),
    "corruption.write_bytes_command": _built(
        lambda v: write_bytes_command(shlex.quote(v), 3, b"\x00'\"$`\n")),
    "corruption.swift_replica_state_command": _built(
        lambda v: swift_replica_state_command(_corruption(v))),
    "replica_swift.flip_script": _built(
        lambda v: replica_swift.flip_script(_corruption(v))),
    "replica_swift.auditor_command": _built(
        lambda v: replica_swift.auditor_command(_auditor_cluster(v), _corruption(v))),
    "replica_ceph.tool_script": _built(
        lambda v: replica_ceph.tool_script(_corruption(v), v)),
    "new_osd.check_command": _built(
        lambda v: new_osd.check_command(_new_osd(v))),
    "new_osd.make_disk_command": _built(
        lambda v: new_osd.make_disk_command(_new_osd(v))),
    "new_osd.mkfs_command": _built(
        lambda v: new_osd.mkfs_command(_new_osd(v))),
    "new_osd.start_command": _built(
        lambda v: new_osd.start_command(_new_osd(v))),
    "new_osd.remove_command": _built(
        lambda v: new_osd.remove_command(
        {"pid_file": v, "image": v, "mount": v})),
    "cpu_hog.start_command": _built(
        lambda v: cpu_hog.start_command(cpu_hog.CpuHog(v, 1, 50, 1, 10))),
    "cpu_hog.stop_command": _built(
        lambda v: cpu_hog.stop_command(v)),
    "memory_hog.memory_command": _built(
        lambda v: memory_hog.memory_command(_node(v))),
    "memory_hog.start_command(cgroup)": _built(
        lambda v: memory_hog.start_command(
        memory_hog.MemoryHog("node1", v, 16, 10, v))),
    "memory_hog.start_command(scope)": _built(
        lambda v: memory_hog.start_command(
        memory_hog.MemoryHog("node1", v, 16, 10, None))),
    "memory_hog.stop_command": _built(
        lambda v: memory_hog.stop_command(_node(v))),
    "memory_hog.daemons_command": _built(
        lambda v: memory_hog.daemons_command({v: v})),
    "io_throttle.throttle_command": _built(
        lambda v: io_throttle.throttle_command(
        io_throttle.Throttle(v, v, (("write_iops", 10),)), 4242)),
    # the cgroup to go back to is refused unless it is a plain path (tested below)
    "io_throttle.release_command": _built(
        lambda v: io_throttle.release_command(v, "/system.slice")),
    "io_throttle.stats_command": _built(
        lambda v: io_throttle.stats_command(v)),
    "new_device.create_command": _built(
        lambda v: new_device.create_command(new_device.ScaleDevice(
        "node1", "10.0.0.11", 1, v, v, v, 64, 100, ("object",)))),
    "new_device.delete_command": _built(
        lambda v: new_device.delete_command(v, v)),
    "new_device.present_command": _built(
        lambda v: new_device.present_command(v, v)),
    "new_device.partitions_command": _built(
        lambda v: new_device.partitions_command(v, ("object",))),
    "new_device.push_commands": _built(
        lambda v: new_device.push_commands(v, "object", v.encode())),
    # runners: the command they would run on the node
    "services.pid_of(pid_file)": _ran(lambda v: services.pid_of(
        _cluster(_service(v)), _service(v, pid_file=v, program=v)),
        "clusters.access.services.run_on_node"),
    "services.pid_of(unit)": _ran(lambda v: services.pid_of(
        _cluster(_service(v)), _service(v, unit=v)), "clusters.access.services.run_on_node"),
    "services.start(unit)": _ran(lambda v: services.start(
        _cluster(_service(v)), _service(v, unit=v)), "clusters.access.services.run_on_node"),
    "supervision.unit_state": _ran(lambda v: supervision.unit_state(
        _cluster(_service(v)), _service(v, unit=v), v), "clusters.access.services.run_on_node"),
    "supervision.inject(down)": _ran(lambda v: supervision.inject(
        _cluster(_service(v)), _service(v, unit=v),
        {"unit": v, "intent": "down", "pid": 1, "supervisor": "systemd"}),
        "clusters.access.services.run_on_node"),
    "supervision.restore(masked)": _ran(lambda v: supervision.restore(
        _cluster(_service(v)), _service(v, unit=v),
        {"unit": v, "intent": "down", "pid": 1, "masked": True}, wait_s=0),
        "clusters.access.services.run_on_node"),
}
@pytest.fixture
def sandbox(tmp_path: Path) -> Path:
    """A directory to run in, and a PATH of only `sh`, `touch` and `dirname` (which only
    prints: without it a builder's walk up to an existing directory never ends)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for program in ("sh", "touch", "dirname"):
        (bin_dir / program).symlink_to(shutil.which(program))
    (tmp_path / "work").mkdir()
    return tmp_path


def _words(command: str) -> list[str]:
    lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|")
    lexer.whitespace_split = True
    return list(lexer)


@pytest.mark.parametrize("payload", PAYLOADS.values(), ids=PAYLOADS.keys())
@pytest.mark.parametrize("name", BUILDERS)
def test_a_hostile_value_reaches_the_shell_only_as_data(name, payload, sandbox, monkeypatch):
    marker = sandbox / "work" / "touched"
    value = payload.replace(MARKER, str(marker))

    commands = BUILDERS[name](value, monkeypatch)

    assert commands, f"{name} built no command"
    for command in commands:
        assert "touch" not in _words(command), command
        done = subprocess.run(["/bin/sh", "-c", command], cwd=sandbox / "work",
                              env={"PATH": str(sandbox / "bin")}, capture_output=True,
                              text=True, timeout=20)
        assert not marker.exists(), f"{name} ran the payload: {command!r} ({done.stderr})"


@pytest.mark.parametrize("payload", PAYLOADS.values(), ids=PAYLOADS.keys())
def test_a_throttle_release_refuses_a_hostile_cgroup_to_go_back_to(payload):
    with pytest.raises(io_throttle.InvalidThrottle, match="is not a cgroup under"):
        io_throttle.release_command("osd.1", "/" + payload)


@pytest.mark.parametrize("payload", PAYLOADS.values(), ids=PAYLOADS.keys())
def test_nftables_rules_take_only_parsed_ipv4_addresses(payload):
    with pytest.raises(InvalidLinkFault, match="is not one"):
        link_faults.ruleset(_link(), [payload], 22)


def test_nftables_rules_write_an_address_as_parsed():
    text = link_faults.ruleset(_link(), ["10.0.0.12", "10.0.0.13"], 22)
    assert "ip saddr { 10.0.0.12, 10.0.0.13 }" in text


@pytest.mark.parametrize("payload", PAYLOADS.values(), ids=PAYLOADS.keys())
def test_discovery_refuses_a_discovered_name_that_is_not_plain(payload):
    daemon = Daemon(name="osd.0", kind="osd", id=payload, entity="osd.0", node="node1",
                    program="ceph-osd")
    with pytest.raises(InventoryError, match="is not a plain name"):
        managed(daemon, Reach(unit="ceph-osd@{id}"), "u", "s", True)


def _inventory(node: dict | None = None, disk: dict | None = None,
               service: dict | None = None) -> dict:
    return {"clusters": {"c": {
        "kind": "swift",
        "nodes": [{"name": "node1", "address": "10.0.0.11", **(node or {})}],
        "disks": [{"node": "node1", "device": "/dev/sdb", "mount": "/srv/node/d1",
                   **(disk or {})}],
        "services": [{"name": "object-server.node1", "kind": "object-server", "node": "node1",
                      "unit": "swift-object", **(service or {})}]}}}


@pytest.mark.parametrize(("part", "field"), [
    ("disk", "mount"), ("disk", "device"), ("disk", "swift_device"), ("service", "unit"),
    ("service", "pid_file"), ("service", "program"), ("node", "address"), ("node", "zone"),
    ("node", "netns"), ("node", "memory_cgroup"),
])
@pytest.mark.parametrize("payload", PAYLOADS.values(), ids=PAYLOADS.keys())
def test_the_inventory_refuses_a_value_that_is_not_the_shape_of_its_field(part, field, payload):
    raw = _inventory(**{part: {field: payload}})
    with pytest.raises(InventoryError, match=f"{field} .* must be"):
        parse_inventory(raw)


def test_the_inventory_takes_plain_units_paths_and_addresses():
    raw = _inventory(node={"address": "storage-1.example.net", "zone": "z1"},
                     service={"unit": "ceph-osd@0.service", "pid_file": "/run/x.pid"})
    cluster = parse_inventory(raw)["c"]
    assert cluster.node("node1").address == "storage-1.example.net"


def test_a_path_with_dot_dot_is_refused():
    with pytest.raises(InventoryError, match="mount '/srv/node/../../etc' must be"):
        parse_inventory(_inventory(disk={"mount": "/srv/node/../../etc"}))


def test_a_signal_that_is_not_a_fault_s_is_refused():
    service = _service("x", pid_file="/p")
    with pytest.raises(Exception, match="signal '9; touch x' is not one of"):
        services.kill(_cluster(service), service, "9; touch x")
