"""Scale out and back in on the real Swift lab: a device added through the action is in the
pushed rings on every node, gets partitions, and replication moves objects onto it with no
acknowledged object lost; a run killed with the device still in the rings leaves a ledger
entry, and `faultline heal` drains it, takes it out of the rings, unmounts it and deletes its
image. Bad input is one message and changes nothing."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
import swiftclient
from chaoslib.exceptions import ActivityFailed

from actions import swift as swift_actions
from clusters.access.credentials import swift_credentials
from clusters.access.ssh import run_on_node
from clusters.paths import default_inventory
from clusters.safety import fault_ledger
from clusters.swift.admin import SwiftAdmin
from clusters.swift.ring import read_ring_facts
from lab.disks import is_mounted
from probes import swift as swift_probes

pytestmark = pytest.mark.lab

OBJECTS = 40


def _config(cluster) -> dict:
    return {"faultline_cluster": cluster.name}


def _connection(cluster) -> swiftclient.Connection:
    credentials = swift_credentials(cluster)
    return swiftclient.Connection(credentials.auth_url, credentials.user, credentials.key,
                                  retries=2)


def _body(name: str) -> bytes:
    return hashlib.sha256(name.encode()).digest() * 64  # 2 KiB, derived from the name


def _read_back(conn, container: str, names: list[str]) -> list[str]:
    """The names whose object is missing or reads back wrong."""
    wrong = []
    for name in names:
        try:
            _, body = conn.get_object(container, name)
        except swiftclient.ClientException:
            body = None
        if body != _body(name):
            wrong.append(name)
    return wrong


def _ring_digests(cluster) -> dict[str, str]:
    """SHA-256 of the object ring as each storage node reads it."""
    path = os.path.join(cluster.client["swift_dir"], "object.ring.gz")
    return {n.name: run_on_node(n, f"sha256sum {path} | cut -d' ' -f1").stdout.strip()
            for n in cluster.nodes}


def _data_files(cluster, mount: str) -> int:
    out = run_on_node(cluster.node("node1"),
                      f"find {mount}/objects -name '*.data' 2>/dev/null | wc -l").stdout
    return int(out.strip() or 0)


@pytest.mark.full  # 166 s; adding capacity under load is in make test on Ceph
# (test_ceph_scale), Swift's ring edits are unit-tested (tests/unit/test_swift_scale.py)
def test_a_device_added_under_scale_gets_data_and_heal_drains_and_removes_it(
        swift_cluster, tmp_path, invoke):
    cluster = swift_cluster
    conn = _connection(cluster)
    container = f"scale-{uuid.uuid4().hex[:8]}"
    conn.put_container(container)
    names = [f"o{i}" for i in range(OBJECTS)]
    for name in names:  # acknowledged before the device comes
        conn.put_object(container, name, _body(name))
    env = {**os.environ, "FAULTLINE_HOME": str(tmp_path),
           "FAULTLINE_INVENTORY": str(default_inventory())}
    ledger = fault_ledger.FileLedger(tmp_path / "faults.json")
    fault_ledger.set_backend(ledger)  # the run's ledger: the cleanup below reads it too
    # a run that adds the device and is killed before it could remove it
    run = subprocess.Popen(
        [sys.executable, "-c", "import json, time; from actions import swift; "
         f"out = swift.add_device(node='node1', size_mib=512, weight=20, "
         f"configuration={_config(cluster)!r}); "
         "print(json.dumps(out), flush=True); time.sleep(600)"],
        env=env, stdout=subprocess.PIPE, text=True, cwd=Path(__file__).parents[2])
    try:
        try:
            added = json.loads(run.stdout.readline() or "null")
        finally:
            os.kill(run.pid, signal.SIGKILL)
            run.wait()
        assert added, "add_device did not complete"
        mount, image = added["mount"], added["image"]

        # in the pushed rings on every node, with partitions of its own
        facts = read_ring_facts(cluster.client["swift_dir"])
        assert facts.device_id("10.78.0.11", "scale-node1") is not None
        assert added["partitions"]["object"] > 0
        digests = _ring_digests(cluster)
        assert len(set(digests.values())) == 1, digests
        assert is_mounted(mount) and os.path.exists(image)
        [entry] = ledger.outstanding(cluster.name)
        assert entry.key == "scale:node1/scale-node1"

        # replication moves objects onto it; nothing acknowledged is lost
        moved = swift_probes.wait_for_data_moved(timeout_s=300,
                                                 configuration=_config(cluster))
        assert moved["moved_s"] >= 15  # not before the servers could have read the rings
        assert _data_files(cluster, mount) > 0
        assert _read_back(conn, container, names) == []

        healed = invoke("heal", "--cluster", cluster.name, "--inventory",
                        str(default_inventory()))

        assert healed.exit_code == 0, healed.output
        assert "restored: device scale-node1" in healed.output, healed.output
        assert ledger.outstanding(cluster.name) == []
        facts = read_ring_facts(cluster.client["swift_dir"])
        assert facts.device_id("10.78.0.11", "scale-node1") is None
        assert len(set(_ring_digests(cluster).values())) == 1
        assert not is_mounted(mount) and not os.path.exists(image)
        assert not os.path.exists(mount)
        with SwiftAdmin(cluster) as admin:
            state = admin.state()
        assert state.fully_redundant, state.summary()
        assert _read_back(conn, container, names) == []
    finally:
        swift_actions.remove_device(node="node1", configuration=_config(cluster))
        fault_ledger.set_backend(None)
        for name in names:
            conn.delete_object(container, name)
        conn.delete_container(container)
        conn.close()


BAD = [
    ("add_device", {"node": "node9"}, "add_device: cluster 'lab-swift' has no node 'node9' "
                                      "(nodes: node1, node2, node3, node4)"),
    ("add_device", {"size_mib": 10}, "add_device: size_mib must be a whole number of MiB "
                                     "from 64 to 1048576, not 10"),
    ("add_device", {"weight": float("nan")}, "add_device: weight must be a number above 0 "
                                             "and at most 100000, not nan"),
    ("add_device", {"rings": ["blob"]}, "add_device: rings must be a list of distinct ring "
                                        "names from object, container, account, not ['blob']"),
    ("remove_device", {"device": "d1"}, "remove_device: device must be a name starting with "
                                        "'scale-' (a device scale adds; letters, digits, - and "
                                        "_), not 'd1'"),
]


@pytest.mark.parametrize(("func", "arguments", "message"), BAD,
                         ids=[f"{f}-{next(iter(a))}" for f, a, _ in BAD])
def test_bad_scale_input_is_one_message_and_changes_nothing(func, arguments, message,
                                                            swift_cluster, file_ledger):
    rings = Path(swift_cluster.client["swift_dir"])
    before = {p.name: p.read_bytes() for p in rings.glob("*.builder")}
    with pytest.raises(ActivityFailed) as failed:
        getattr(swift_actions, func)(**arguments, configuration=_config(swift_cluster))
    assert str(failed.value) == message
    assert {p.name: p.read_bytes() for p in rings.glob("*.builder")} == before
    assert not list(rings.glob("*.staged"))
    assert fault_ledger.backend().outstanding(swift_cluster.name) == []


def test_a_leftover_scale_image_is_refused_and_left_alone(swift_cluster, file_ledger):
    disk = next(d for d in swift_cluster.disks_on("node1") if d.swift_device)
    image = Path(disk.device).parent / "scale-node1.img"  # as a killed run may leave it
    rings = Path(swift_cluster.client["swift_dir"])
    before = {p.name: p.read_bytes() for p in rings.glob("*.builder")}
    image.write_bytes(b"")
    try:
        with pytest.raises(ActivityFailed) as failed:
            swift_actions.add_device(node="node1", configuration=_config(swift_cluster))
        assert str(failed.value) == (
            "add_device: scale-node1 on node1 is in no ring, but its image is there already "
            "(left by a killed run? faultline heal, or remove_device)")
        assert image.exists()
        assert {p.name: p.read_bytes() for p in rings.glob("*.builder")} == before
        assert fault_ledger.backend().outstanding(swift_cluster.name) == []
        # in no ring and not in the ledger: not scale's to delete
        removed = swift_actions.remove_device(node="node1", configuration=_config(swift_cluster))
        assert (removed["removed_from"], removed["deleted"]) == ([], [])
        assert image.exists()
    finally:
        image.unlink()
