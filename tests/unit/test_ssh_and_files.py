"""SSH trusts only what the inventory names, secret files named there must be private, the
BMC's settings and files are safe, and Swift rings never unpickle.

These refusals happen before anything goes on the network; tests/integration/
test_hostile_ssh.py plays the host key rules against a real sshd.
"""

from __future__ import annotations

import gzip
import os
import pickle
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from clusters.access import private_files
from clusters.access.inventory import Node, SshAccess, parse_inventory
from clusters.access.private_files import write_private
from clusters.access.ssh import NodeShell
from clusters.discovery.rings import read_rings
from clusters.exceptions import (
    AdminCommandFailed,
    HostKeyMismatch,
    InsecureSecretFile,
    InventoryError,
    NodeUnreachable,
)
from clusters.faults import power
from clusters.swift.ring import read_ring_facts
from clusters.swift.ring_edit import edit_rings


def _key(tmp_path: Path, mode: int) -> Path:
    key = tmp_path / "id_ed25519"
    key.write_text("not a key: the check comes before it is read\n")
    key.chmod(mode)
    return key


def _node(**ssh) -> Node:
    return Node(name="node1", address="127.0.0.1", ssh=SshAccess(**ssh))


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o660])
def test_an_ssh_key_file_others_can_read_is_refused_with_its_mode(tmp_path, mode):
    key = _key(tmp_path, mode)
    shell = NodeShell(_node(key_file=str(key), known_hosts=str(tmp_path / "kh")))

    with pytest.raises(InsecureSecretFile) as raised:
        shell.connect()

    assert str(raised.value) == (
        f"refusing the SSH key file of node node1 {key}: other users can read or change it "
        f"(mode {mode:04o}); make it private with `chmod 600 {key}`")


def test_an_ssh_key_file_of_another_user_is_refused(tmp_path):
    if os.geteuid() != 0:
        pytest.fail("giving a file to another user needs root, as the lab does")
    key = _key(tmp_path, 0o600)
    os.chown(key, 65534, 65534)

    with pytest.raises(InsecureSecretFile, match=r"belongs to uid 65534, not to uid 0"):
        NodeShell(_node(key_file=str(key), known_hosts=str(tmp_path / "kh"))).connect()


def test_ssh_without_a_key_file_in_the_inventory_never_falls_back_to_home():
    with pytest.raises(NodeUnreachable, match="has no ssh key_file in the inventory .*never "
                                              "~/.ssh"):
        NodeShell(_node(known_hosts="/kh")).connect()


def test_ssh_that_verifies_without_a_known_hosts_file_is_refused(tmp_path):
    key = _key(tmp_path, 0o600)
    with pytest.raises(HostKeyMismatch, match="no known_hosts in the inventory .*host_keys: "
                                              "tofu"):
        NodeShell(_node(key_file=str(key))).connect()


def _inventory(ssh: dict, power_: dict | None = None) -> dict:
    node = {"name": "node1", "address": "10.0.0.11", **({"power": power_} if power_ else {})}
    return {"clusters": {"c": {"kind": "swift", "ssh": ssh, "nodes": [node]}}}


def test_verify_host_keys_false_is_refused_naming_trust_on_first_use():
    with pytest.raises(InventoryError, match=r"verify_host_keys: False is refused \(it took "
                                             r"any host key\): set host_keys: tofu"):
        parse_inventory(_inventory({"verify_host_keys": False}))


def test_host_keys_is_verify_or_tofu():
    with pytest.raises(InventoryError, match="host_keys must be verify or tofu, not 'any'"):
        parse_inventory(_inventory({"host_keys": "any"}))
    cluster = parse_inventory(_inventory({"host_keys": "tofu"}))["c"]
    assert cluster.node("node1").ssh.host_keys == "tofu"


BMC = {"type": "ipmi", "address": "127.0.0.1", "user": "admin", "password_file": "/p"}


def test_cipher_suite_0_is_refused_by_the_inventory():
    with pytest.raises(InventoryError) as raised:
        parse_inventory(_inventory({}, {**BMC, "cipher_suite": 0}))
    assert str(raised.value).endswith(
        "cipher_suite 0 is refused: it authenticates nothing (anyone on the BMC's network can "
        "power the node off); use 3 (the default) or 17")


def test_cipher_suite_0_is_refused_by_the_command_line_maker():
    with pytest.raises(InventoryError, match="cipher_suite 0 is refused"):
        power.ipmitool_argv({**BMC, "cipher_suite": 0}, "chassis", "power", "off")


def test_a_bmc_address_that_is_not_an_address_is_refused():
    with pytest.raises(InventoryError, match="address '-H evil' must be an IP address or a "
                                             "host name"):
        parse_inventory(_inventory({}, {**BMC, "address": "-H evil"}))


def test_a_bmc_password_file_others_can_read_is_refused_before_ipmitool_runs(tmp_path,
                                                                          monkeypatch):
    password = tmp_path / "password"
    password.write_text("s3cret\n")
    password.chmod(0o644)
    ran = []
    monkeypatch.setattr(power.subprocess, "run", lambda *a, **k: ran.append(a))
    node = Node(name="node1", address="10.0.0.11",
                power={**BMC, "password_file": str(password)})

    with pytest.raises(InsecureSecretFile) as raised:
        power.bmc_power_is_on(node)

    assert str(raised.value) == (
        f"refusing the BMC password file of node node1 {password}: other users can read or "
        f"change it (mode 0644); make it private with `chmod 600 {password}`")
    assert ran == []


def test_a_secret_file_is_created_private_and_never_chmodded(tmp_path, monkeypatch):
    path = tmp_path / "lan.conf"
    path.write_text("an older, world-readable copy\n")
    path.chmod(0o644)
    opened, chmodded = [], []
    real_open = os.open
    monkeypatch.setattr(private_files.os, "open", lambda p, flags, mode=0o777: (
        opened.append((Path(p).name, mode)), real_open(p, flags, mode))[1])
    monkeypatch.setattr(Path, "chmod", lambda self, mode: chmodded.append(self))

    write_private(path, 'user 2 true "admin" "s3cret" admin 10 md5\n')

    assert opened == [(".lan.conf.partial", 0o600)]
    assert chmodded == []
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert "s3cret" in path.read_text()


# -- rings -------------------------------------------------------------------------------

class _Payload:
    """What a hostile ring or builder file carries: a call run as it is unpickled."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def _swift(script: str, *args: str) -> None:
    subprocess.run([sys.executable, "-c", script, *args], check=True, capture_output=True)


def _rings(directory: Path) -> None:
    """An R1NG ring and its builder, each of the three types, as Swift 2.30 writes them."""
    _swift("import sys\nfrom swift.common.ring import RingBuilder\n"
           "for t in ('object', 'container', 'account'):\n"
           "    b = RingBuilder(6, 3, 1)\n"
           "    for i in range(3):\n"
           "        b.add_dev({'region': 1, 'zone': i + 1, 'ip': '10.0.0.%d' % (i + 11),\n"
           "                   'port': 6200, 'device': 'd%d' % i, 'weight': 100})\n"
           "    b.rebalance()\n"
           "    b.save(f'{sys.argv[1]}/{t}.builder')\n"
           "    b.get_ring().save(f'{sys.argv[1]}/{t}.ring.gz')\n", str(directory))


def test_rings_swift_writes_are_read_without_pickle(tmp_path):
    _rings(tmp_path)
    facts = read_ring_facts(str(tmp_path))
    assert facts.replicas == {"object": 3.0, "container": 3.0, "account": 3.0}
    shown = edit_rings(str(tmp_path), {"op": "show", "rings": ["object"], "ip": "10.0.0.11",
                                       "device": "d0"})
    assert shown["object"]["present"] is True


def test_a_pickled_ring_is_refused_and_what_it_carries_never_runs(tmp_path):
    _rings(tmp_path)
    marker = tmp_path / "ran"
    with gzip.open(tmp_path / "object.ring.gz", "wb") as ring:
        ring.write(pickle.dumps(_Payload(marker), protocol=2))

    with pytest.raises(AdminCommandFailed, match="object.ring.gz: it is a pickle"):
        read_ring_facts(str(tmp_path))
    with pytest.raises(InventoryError, match="object.ring.gz: it is a pickle"):
        read_rings([tmp_path / "object.ring.gz"])
    assert not marker.exists()


def test_a_builder_naming_anything_but_arrays_is_refused_and_never_runs(tmp_path):
    _rings(tmp_path)
    marker = tmp_path / "ran"
    (tmp_path / "object.builder").write_bytes(pickle.dumps(_Payload(marker), protocol=2))

    with pytest.raises(AdminCommandFailed, match=r"object.builder: it names posix.system, "
                                                 r"which no ring builder holds"):
        edit_rings(str(tmp_path), {"op": "show", "rings": ["object"], "ip": "10.0.0.11",
                                   "device": "d0"})
    assert not marker.exists()
