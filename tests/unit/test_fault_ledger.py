"""The fault ledger in its default file: written before injection, struck after restore,
safe against concurrent writers, and able to tell a dead owner from a live one."""

from __future__ import annotations

import datetime
import json
import multiprocessing
import os
import socket
import subprocess
import time
from pathlib import Path

import pytest

from clusters.exceptions import FaultLedgerError
from clusters.safety import fault_ledger
from clusters.safety.fault_ledger import FaultEntry, FileLedger

RESTORE = "actions.ceph.start_osd"


@pytest.fixture
def ledger(tmp_path):
    """A FileLedger in a temporary directory, installed as this process's ledger."""
    ledger = FileLedger(tmp_path / "faults.json")
    fault_ledger.set_backend(ledger)
    yield ledger
    fault_ledger.set_backend(None)


def entry(key: str = "daemon:osd.1", *, cluster: str = "lab-ceph", pid: int | None = None,
          host: str | None = None, at: float = 1_700_000_000.0) -> FaultEntry:
    return FaultEntry(id=f"id-{key}-{at}", cluster=cluster, key=key, description=f"{key} broken",
                      restore=RESTORE, arguments={"osd_id": 1}, injected_at=at,
                      owner_pid=os.getpid() if pid is None else pid,
                      owner_host=host or socket.gethostname())


def dead_pid() -> int:
    process = subprocess.Popen(["true"])
    process.wait()  # reaped: the PID runs nothing any more
    return process.pid


def test_a_recorded_fault_is_in_the_file_when_record_returns(ledger):
    recorded = fault_ledger.record("lab-ceph", "daemon:osd.1",
                                   "osd.1 killed (SIGKILL, pid 1234) on node2", RESTORE,
                                   {"osd_id": 1})

    assert FileLedger(ledger.path).outstanding() == [recorded]
    assert json.loads(ledger.path.read_text())["faults"] == [recorded.as_dict()]


def test_record_names_this_process_as_the_owner_and_the_time_of_injection(ledger):
    before = time.time()
    recorded = fault_ledger.record("lab-ceph", "daemon:osd.1", "osd.1 killed", RESTORE, {})

    assert (recorded.owner_pid, recorded.owner_host) == (os.getpid(), socket.gethostname())
    assert before <= recorded.injected_at <= time.time()
    assert len(recorded.id) == 32 and recorded.run_id is None


def test_record_stores_the_arguments_as_they_will_be_replayed(ledger):
    recorded = fault_ledger.record("lab-swift", "daemon:object-server@node1",
                                   "object server killed", "actions.swift.start_server",
                                   {"server": "object", "nodes": ("node1",)})

    assert recorded.arguments == {"server": "object", "nodes": ["node1"]}


def test_record_takes_the_run_id_from_a_backend_that_has_one(tmp_path):
    class RunLedger(FileLedger):
        run_id = 12

    fault_ledger.set_backend(RunLedger(tmp_path / "faults.json"))
    try:
        recorded = fault_ledger.record("lab-ceph", "daemon:osd.1", "osd.1 killed", RESTORE, {})
    finally:
        fault_ledger.set_backend(None)

    assert recorded.run_id == 12
    assert FileLedger(tmp_path / "faults.json").outstanding()[0].run_id == 12


def test_strike_removes_every_entry_of_that_cluster_and_key_and_counts_them(ledger):
    ledger.add(entry("daemon:osd.1", at=1.0))
    ledger.add(entry("daemon:osd.1", at=2.0))
    ledger.add(entry("daemon:osd.2", at=3.0))
    ledger.add(entry("daemon:osd.1", cluster="other", at=4.0))

    assert fault_ledger.strike("lab-ceph", "daemon:osd.1") == 2
    assert [(e.cluster, e.key) for e in fault_ledger.outstanding()] == [
        ("lab-ceph", "daemon:osd.2"), ("other", "daemon:osd.1")]


def test_striking_what_is_not_in_the_ledger_counts_zero_and_creates_nothing(ledger):
    assert fault_ledger.strike("lab-ceph", "daemon:osd.1") == 0
    assert not ledger.path.exists()


def test_outstanding_is_oldest_first_and_can_be_limited_to_one_cluster(ledger):
    ledger.add(entry("power:node3", at=30.0))
    ledger.add(entry("disk:node2", cluster="lab-swift", at=20.0))
    ledger.add(entry("daemon:osd.1", at=10.0))

    assert [e.key for e in fault_ledger.outstanding()] == [
        "daemon:osd.1", "disk:node2", "power:node3"]
    assert [e.key for e in fault_ledger.outstanding("lab-ceph")] == [
        "daemon:osd.1", "power:node3"]


def test_the_default_ledger_is_a_file_in_the_state_directory(tmp_path, monkeypatch):
    monkeypatch.setenv("FAULTLINE_HOME", str(tmp_path / "home"))
    fault_ledger.set_backend(None)

    fault_ledger.record("lab-ceph", "daemon:osd.1", "osd.1 killed", RESTORE, {"osd_id": 1})

    assert fault_ledger.backend().path == tmp_path / "home" / "faults.json"
    assert [e.key for e in FileLedger(tmp_path / "home" / "faults.json").outstanding()] == [
        "daemon:osd.1"]


def test_orphaned_lists_only_faults_whose_owner_died_on_this_host(ledger):
    ledger.add(entry("daemon:osd.1", pid=dead_pid(), at=1.0))
    ledger.add(entry("daemon:osd.2", at=2.0))  # this process: alive
    ledger.add(entry("daemon:osd.3", pid=dead_pid(), host="elsewhere.example", at=3.0))

    assert [e.key for e in fault_ledger.orphaned()] == ["daemon:osd.1"]
    assert fault_ledger.orphaned("lab-swift") == []


def test_owner_alive_is_false_for_a_dead_pid_true_for_a_live_one_none_on_another_host():
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        assert entry(pid=sleeper.pid).owner_alive() is True
    finally:
        sleeper.kill()
        sleeper.wait()
    assert entry(pid=dead_pid()).owner_alive() is False
    assert entry(pid=os.getpid(), host="elsewhere.example").owner_alive() is None


def test_a_zombie_owner_counts_as_dead():
    zombie = subprocess.Popen(["true"])  # not waited for: it stays a zombie
    try:
        deadline = time.monotonic() + 10
        status = Path(f"/proc/{zombie.pid}/status")
        while "State:\tZ" not in status.read_text():
            assert time.monotonic() < deadline, f"pid {zombie.pid} did not exit within 10 s"
            time.sleep(0.01)
        assert entry(pid=zombie.pid).owner_alive() is False
    finally:
        zombie.wait()


def _record_fifty(path: Path, tag: str, start) -> None:
    fault_ledger.set_backend(FileLedger(path))
    start.wait(10)
    for i in range(50):
        fault_ledger.record("lab-ceph", f"daemon:{tag}.{i}", f"{tag} {i}", RESTORE, {"i": i})


def test_two_processes_recording_at_once_lose_none_of_each_others_entries(tmp_path):
    path = tmp_path / "faults.json"
    context = multiprocessing.get_context("fork")
    start = context.Event()
    writers = [context.Process(target=_record_fifty, args=(path, tag, start))
               for tag in ("a", "b")]
    for writer in writers:
        writer.start()
    start.set()  # both write at the same time
    for writer in writers:
        writer.join(60)

    assert [w.exitcode for w in writers] == [0, 0]
    keys = {e.key for e in FileLedger(path).outstanding()}
    assert keys == {f"daemon:{tag}.{i}" for tag in ("a", "b") for i in range(50)}


def test_an_unreadable_ledger_file_is_reported_with_its_path(tmp_path):
    path = tmp_path / "faults.json"
    path.write_text("{not json")

    with pytest.raises(FaultLedgerError) as caught:
        FileLedger(path).outstanding()

    assert str(caught.value) == (
        f"the fault ledger {path} is unreadable (Expecting property name enclosed in double "
        "quotes: line 1 column 2 (char 1)); check by hand what it lists before removing it")


@pytest.mark.parametrize(("cluster", "key", "restore", "arguments", "message"), [
    ("", "daemon:osd.1", RESTORE, {}, "cluster must be a non-empty string, not ''"),
    ("lab-ceph", " ", RESTORE, {}, "key must be a non-empty string, not ' '"),
    ("lab-ceph", "daemon:osd.1", "service.cli.main", {},
     "restore must be the dotted path of a function under actions., not 'service.cli.main'"),
    ("lab-ceph", "daemon:osd.1", "actions", {},
     "restore must be the dotted path of a function under actions., not 'actions'"),
    ("lab-ceph", "daemon:osd.1", "actions.ceph.start_osd()", {},
     "restore must be the dotted path of a function under actions., "
     "not 'actions.ceph.start_osd()'"),
    ("lab-ceph", "daemon:osd.1", RESTORE, [1], "arguments must be a dict, not list"),
    ("lab-ceph", "daemon:osd.1", RESTORE, {1: 2}, "argument names must be strings, not 1"),
    ("lab-ceph", "daemon:osd.1", RESTORE, {"configuration": {}},
     "arguments must not include 'configuration': the restore is given its cluster's when "
     "it is replayed"),
    ("lab-ceph", "daemon:osd.1", RESTORE, {"at": datetime.date(2026, 1, 1)},
     "arguments of actions.ceph.start_osd must be JSON-able: Object of type date is not "
     "JSON serializable"),
    ("lab-ceph", "daemon:osd.1", RESTORE, {"timeout_s": float("inf")},
     "arguments of actions.ceph.start_osd must be JSON-able: Out of range float values are "
     "not JSON compliant"),
    ("lab-ceph", "daemon:osd.1", RESTORE, {"osd_id": 1, "fault": {"unit": "x"}},
     "arguments of actions.ceph.start_osd say which fault to undo, not what was done: fault "
     "belong in the record"),
])
def test_record_refuses_what_could_not_be_replayed_and_writes_nothing(
        ledger, cluster, key, restore, arguments, message):
    with pytest.raises(ValueError) as caught:
        fault_ledger.record(cluster, key, "broken", restore, arguments)

    assert str(caught.value) == message
    assert not ledger.path.exists()


def test_an_entry_is_rebuilt_from_its_dict():
    original = entry()

    assert FaultEntry(**original.as_dict()) == original


FAULT = {"daemon": "osd.1", "intent": "down", "supervisor": "systemd",
         "unit": "ceph-osd@1.service", "pid": 4242, "restarts_before": 0, "masked": True}


def test_the_record_round_trips_through_the_file_beside_the_arguments(ledger):
    recorded = fault_ledger.record("lab-ceph", "daemon:osd.1", "osd.1 killed", RESTORE,
                                   {"osd_id": 1}, {"fault": FAULT})

    (read,) = FileLedger(ledger.path).outstanding()
    assert (read.arguments, read.record) == ({"osd_id": 1}, {"fault": FAULT})
    assert read == recorded
    assert json.loads(ledger.path.read_text())["faults"][0]["record"] == {"fault": FAULT}
    assert fault_ledger.recorded("lab-ceph", "daemon:osd.1") == {"fault": FAULT}


def test_recorded_is_the_newest_outstanding_record_and_none_without_an_entry(ledger):
    assert fault_ledger.recorded("lab-ceph", "daemon:osd.1") is None
    fault_ledger.record("lab-ceph", "daemon:osd.1", "old", RESTORE, {"osd_id": 1},
                        {"fault": {**FAULT, "pid": 1}})
    fault_ledger.record("lab-ceph", "daemon:osd.1", "new", RESTORE, {"osd_id": 1},
                        {"fault": FAULT})

    assert fault_ledger.recorded("lab-ceph", "daemon:osd.1") == {"fault": FAULT}
    assert fault_ledger.recorded("other", "daemon:osd.1") is None


@pytest.mark.parametrize(("arguments", "which", "record"), [
    ({"osd_id": 1, "fault": FAULT}, {"osd_id": 1}, {"fault": FAULT}),
    ({"osd_id": 4, "added": {"osd_id": 4}}, {"osd_id": 4}, {"added": {"osd_id": 4}}),
    ({"corruption": {"hash": "abc"}}, {}, {"corruption": {"hash": "abc"}}),
    ({"daemon": "osd.1", "back_to": "/"}, {"daemon": "osd.1"}, {"back_to": "/"}),
    ({"node": "node2", "before": {"osd.1": 9}}, {"node": "node2"}, {"before": {"osd.1": 9}}),
    ({"node": "node1", "device": "scale-node1", "image_dir": ""},
     {"node": "node1", "device": "scale-node1"}, {"image_dir": ""}),
])
def test_an_entry_written_before_the_record_is_read_with_its_what_as_the_record(
        ledger, arguments, which, record):
    old = entry().as_dict()
    del old["record"]
    ledger.path.write_text(json.dumps({"faults": [{**old, "arguments": arguments}]}))

    (read,) = ledger.outstanding()

    assert (read.arguments, read.record) == (which, record)
