"""Silent corruption of one replica (clusters/faults/corruption.py, and the pure parts of
clusters/faults/replica_ceph.py and clusters/faults/replica_swift.py): the replica chosen,
the guard's refusals, the byte flip on a real file, and the commands and outputs of the
nodes' tools."""

from __future__ import annotations

import subprocess

import pytest

from clusters.access.inventory import parse_inventory
from clusters.exceptions import BlastRadiusExceeded, InvalidCorruption
from clusters.faults.corruption import (
    FLIP_LENGTH,
    Corruption,
    canary_content,
    choose_node,
    choose_osd,
    daemon_invocation,
    flip_offset,
    flipped,
    judge,
    md5_of,
    option_of,
    parse_replica_state,
    swift_object_dir,
    swift_replica_state_command,
    write_bytes_command,
)
from clusters.faults.replica_ceph import parse_inconsistent, tool_script
from clusters.faults.replica_swift import auditor_command, flip_script

CONTENT = canary_content("faultline-canary/faultline-canary-1")
OFFSET = flip_offset(len(CONTENT))
SWIFT = Corruption(
    system="swift", object="faultline-canary/faultline-canary-1", owned=True,
    size=len(CONTENT), md5=md5_of(CONTENT), bad_md5=md5_of(flipped(CONTENT, OFFSET)),
    offset=OFFSET, good=CONTENT[OFFSET:OFFSET + FLIP_LENGTH].hex(), replica="node3/d3",
    copies=3, node="node3", path=swift_object_dir("/srv/node3/d3", 59, "3b4d" + "0" * 28),
    mount="/srv/node3/d3", hash="3b4d" + "0" * 28)
CEPH = Corruption(
    system="ceph", object="faultline-canary-1", owned=True, size=len(CONTENT),
    md5=SWIFT.md5, bad_md5=SWIFT.bad_md5, offset=OFFSET, good=SWIFT.good, replica="osd.2",
    copies=3, pool="faultline", pgid="2.b", holders=["osd.1", "osd.3", "osd.2"], node="node3",
    path="/var/lib/faultline/lab/ceph/osd/ceph-2")
LAB_AUDITOR = (
    "sh -c 'ulimit -c 0; cd /; SWIFT_CONF_FILE=/lab/etc/swift.conf PYTHONPATH=/lab/shim "
    "PYTHONDONTWRITEBYTECODE=1 setsid swift-object-auditor /lab/etc/object-server/node3.conf "
    "-v </dev/null >>/lab/log/object-auditor.node3.log 2>&1 & "
    "echo $! >/lab/run/object-auditor.node3.pid'")


def _run(script: str) -> subprocess.CompletedProcess:
    return subprocess.run(["/bin/sh", "-c", script], capture_output=True, text=True, check=True)


def test_the_flip_inverts_sixteen_bytes_of_a_file_in_place_and_writing_the_good_ones_undoes_it(
        tmp_path):
    data = tmp_path / "1764115200.00000.data"
    data.write_bytes(CONTENT)
    inode = data.stat().st_ino
    bad = bytes(b ^ 0xFF for b in CONTENT[OFFSET:OFFSET + FLIP_LENGTH])

    _run(write_bytes_command(str(data), OFFSET, bad))

    assert data.read_bytes() == flipped(CONTENT, OFFSET)
    assert md5_of(data.read_bytes()) == SWIFT.bad_md5 != SWIFT.md5
    assert sum(a != b for a, b in zip(data.read_bytes(), CONTENT, strict=True)) == FLIP_LENGTH
    assert data.stat().st_ino == inode and data.stat().st_size == len(CONTENT)
    _run(write_bytes_command(f'"{data}"', OFFSET, bytes.fromhex(SWIFT.good)))
    assert data.read_bytes() == CONTENT


def test_the_swift_flip_script_checks_the_data_file_then_flips_it_and_prints_its_md5(
        tmp_path):
    corruption = Corruption.from_arguments({**SWIFT.as_arguments(), "path": str(tmp_path)})
    data = tmp_path / "1764115200.00000.data"
    data.write_bytes(CONTENT)

    out = _run(flip_script(corruption)).stdout.split()

    assert out == [str(data), SWIFT.bad_md5]
    assert data.read_bytes() == flipped(CONTENT, OFFSET)
    # a file that does not hold the object's content is left alone
    refused = subprocess.run(["/bin/sh", "-c", flip_script(corruption)], capture_output=True,
                             text=True)
    assert refused.returncode == 4 and "does not hold the object's content" in refused.stderr
    assert data.read_bytes() == flipped(CONTENT, OFFSET)


def test_the_flip_lands_inside_any_object_big_enough_and_refuses_a_smaller_one():
    assert flip_offset(16 * 1024) == 5461 and flip_offset(20) == 4
    with pytest.raises(InvalidCorruption) as refused:
        flip_offset(10)
    assert str(refused.value) == "an object of 10 bytes is too small to flip 16 bytes in"


def test_the_canary_content_is_derived_from_its_name():
    assert canary_content("a", 100) == canary_content("a", 100)[:100]
    assert len(canary_content("a")) == 16 * 1024 and canary_content("a") != canary_content("b")


def test_ceph_corrupts_a_copy_that_is_not_the_primary_unless_an_osd_is_named():
    assert choose_osd([1, 3, 2], 1, -1, "x") == 2
    assert choose_osd([2, 1, 3], 2, -1, "x") == 3
    assert choose_osd([1, 3, 2], 1, 1, "x") == 1  # named: the primary, if asked for


def test_an_osd_without_a_copy_is_refused_naming_the_acting_set():
    with pytest.raises(InvalidCorruption) as refused:
        choose_osd([1, 3, 2], 1, 0, "faultline-canary-1")
    assert str(refused.value) == ("osd.0 holds no copy of faultline-canary-1 (acting set "
                                  "osd.1, osd.3, osd.2)")


def test_swift_corrupts_the_copy_on_the_named_node_or_the_last_primary():
    assert choose_node(["node2", "node3", "node4"], "", "c/o") == "node4"
    assert choose_node(["node2", "node3", "node4"], "node2", "c/o") == "node2"
    with pytest.raises(InvalidCorruption) as refused:
        choose_node(["node2", "node3", "node4"], "node1", "c/o")
    assert str(refused.value) == ("node1 holds no primary copy of c/o (its primaries: node2, "
                                  "node3, node4)")


def test_one_corrupted_copy_of_three_is_allowed():
    verdict = judge("corrupt x on osd.2", copies=3, intact=3, corrupted_already=0,
                    where="pool faultline")
    assert verdict["allowed"] is True
    assert verdict["message"] == "allowed: corrupt x on osd.2: 2 of 3 copies stay good"


@pytest.mark.parametrize(("copies", "intact", "already", "message"), [
    (3, 3, 1, "refused: corrupt x on osd.2: 2 of 3 copies would be corrupted (1 already) and "
              "1 good left: a repair could keep the corrupted content"),
    (3, 2, 0, "refused: corrupt x on osd.2: 1 of 3 copies would be corrupted and 1 good left: "
              "a repair could keep the corrupted content"),  # a copy is down already
    (1, 1, 0, "refused: corrupt x on osd.2: pool faultline keeps 1 copy: a repair needs two "
              "good copies that outvote the corrupted one"),
    (2, 2, 0, "refused: corrupt x on osd.2: pool faultline keeps 2 copies: a repair needs two "
              "good copies that outvote the corrupted one"),
])
def test_the_guard_refuses_a_corruption_a_repair_could_not_undo(copies, intact, already,
                                                                 message):
    with pytest.raises(BlastRadiusExceeded) as refused:
        judge("corrupt x on osd.2", copies, intact, already, "pool faultline")
    assert str(refused.value) == message


def test_a_corruption_round_trips_through_the_ledger_and_names_what_it_touches():
    again = Corruption.from_arguments({**CEPH.as_arguments(), "unknown": 1})

    assert again == CEPH
    assert CEPH.key == "corrupt:faultline-canary-1@osd.2" and CEPH.osd == 2
    assert CEPH.says() == ("16 bytes flipped at offset 5461 of faultline-canary-1 (16384 B) "
                           "on its replica osd.2 (PG 2.b)")


@pytest.mark.parametrize(("output", "state"), [
    (f"{SWIFT.md5}  1764115200.00000.data\n--quarantine--\n", (SWIFT.md5, False)),
    (f"{SWIFT.bad_md5}  1764115200.00000.data\n--quarantine--\n", (SWIFT.bad_md5, False)),
    ("--quarantine--\n/srv/node3/d3/quarantined/objects/3b4d\n", (None, True)),
    (f"{SWIFT.md5}  1764115200.00000.data\n--quarantine--\n"
     "/srv/node3/d3/quarantined/objects/3b4d\n", (SWIFT.md5, True)),  # replicated back
])
def test_the_replica_state_is_its_data_md5_and_whether_it_is_quarantined(output, state):
    assert parse_replica_state(output) == state


def test_the_replica_state_command_looks_in_the_object_dir_and_the_quarantine(tmp_path):
    corruption = Corruption.from_arguments({
        **SWIFT.as_arguments(), "mount": str(tmp_path),
        "path": swift_object_dir(str(tmp_path), 59, SWIFT.hash)})
    object_dir = tmp_path / "objects" / "59" / SWIFT.hash[-3:] / SWIFT.hash
    object_dir.mkdir(parents=True)
    (object_dir / "1764115200.00000.data").write_bytes(CONTENT)

    assert parse_replica_state(_run(swift_replica_state_command(corruption)).stdout) == (
        SWIFT.md5, False)
    object_dir.rename(tmp_path / "quarantined")
    (tmp_path / "quarantined").rename(tmp_path / "q")
    (tmp_path / "quarantined" / "objects").mkdir(parents=True)
    (tmp_path / "q").rename(tmp_path / "quarantined" / "objects" / SWIFT.hash)
    assert parse_replica_state(_run(swift_replica_state_command(corruption)).stdout) == (
        None, True)


def test_a_daemons_environment_and_arguments_come_from_its_start_command():
    env, arguments = daemon_invocation(LAB_AUDITOR, "swift-object-auditor")
    assert env == {"SWIFT_CONF_FILE": "/lab/etc/swift.conf", "PYTHONPATH": "/lab/shim",
                   "PYTHONDONTWRITEBYTECODE": "1"}
    assert arguments == ["/lab/etc/object-server/node3.conf", "-v"]
    _, osd = daemon_invocation("sh -c 'ulimit -c 0; exec ceph-osd -c /lab/ceph.conf -i 2 "
                               "</dev/null >>/lab/log/osd.2.stdout 2>&1'", "ceph-osd")
    assert option_of(osd, "-c", "--conf") == "/lab/ceph.conf"
    assert daemon_invocation(None, "ceph-osd") == ({}, [])
    assert option_of(daemon_invocation("ceph-osd -i 2", "ceph-osd")[1], "-c") is None


def test_the_auditor_runs_once_on_the_device_with_the_nodes_conf_and_no_rate_limit():
    cluster = parse_inventory({"clusters": {"s": {
        "kind": "swift", "client": {"swift_dir": "/lab/etc"},
        "nodes": [{"name": "node3", "address": "10.78.0.13", "zone": "zone2"}],
        "services": [{"name": "object-auditor.node3", "kind": "object-auditor",
                      "node": "node3", "pid_file": "/lab/run/a.pid", "start": LAB_AUDITOR}]}}})["s"]

    command = auditor_command(cluster, SWIFT)

    assert command.startswith("rm -f /srv/node3/d3/objects/auditor_status_ALL.json; ")
    assert "cp /lab/etc/object-server/node3.conf \"$t\"/00-server.conf" in command
    assert ("files_per_second = 0\\nbytes_per_second = 0\\nzero_byte_files_per_second = 0"
            in command)
    assert ("env SWIFT_CONF_FILE=/lab/etc/swift.conf PYTHONPATH=/lab/shim "
            "PYTHONDONTWRITEBYTECODE=1 swift-object-auditor \"$t\" once -v -d d3") in command


def test_the_objectstore_tool_reads_checks_flips_writes_and_reads_the_copy_again():
    script = tool_script(CEPH, "/lab/ceph.conf")
    tool = ("CEPH_CONF=/lab/ceph.conf ceph-objectstore-tool --no-mon-config --data-path "
            "/var/lib/faultline/lab/ceph/osd/ceph-2 --pgid 2.b faultline-canary-1")

    steps = [f"{tool} get-bytes \"$t\";", f"= {CEPH.md5} ]", "dd of=\"$t\" bs=1 seek=5461",
             f"{tool} set-bytes \"$t\";", f"{tool} get-bytes \"$t\".check;",
             "md5sum < \"$t\".check"]
    places = [script.index(step) for step in steps]
    assert places == sorted(places)
    assert script.startswith("set -e; t=/tmp/faultline-corrupt-faultline-canary-1-osd.2; "
                             "trap 'rm -f \"$t\" \"$t\".check' EXIT;")


def test_list_inconsistent_obj_names_the_copy_with_errors():
    raw = {"epoch": 40, "inconsistents": [
        {"object": {"name": "other"}, "errors": [], "shards": [
            {"osd": 1, "errors": ["data_digest_mismatch_info"]}]},
        {"object": {"name": "faultline-canary-1", "nspace": ""},
         "errors": [], "union_shard_errors": ["data_digest_mismatch_info"],
         "shards": [{"osd": 1, "errors": []},
                    {"osd": 2, "errors": ["data_digest_mismatch_info"]},
                    {"osd": 3, "errors": []}]}]}

    assert parse_inconsistent(raw, "faultline-canary-1") == ["osd.2: data_digest_mismatch_info"]
    assert parse_inconsistent({"inconsistents": []}, "faultline-canary-1") == []
