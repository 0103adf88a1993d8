"""`faultline faults`, `faultline heal`, and the healing of a dead run's faults before
`faultline run` and `faultline suite` start (real PostgreSQL, no lab)."""

from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path

import pytest
from factories import make_run
from fake_restores import UNREACHABLE, dead_pid, fault, install, unique_cluster
from sqlalchemy import delete

from clusters.safety.fault_ledger import FileLedger
from service.runs import launch
from service.store.fault_ledger import PgFaultLedger
from service.store.models import FaultRecord, Run

REPO = Path(__file__).resolve().parents[2]
EXPERIMENT = str(REPO / "experiments" / "ceph-kill-osd.json")
BROKEN = "actions.fake_restore.broken"


@pytest.fixture
def clusters(sessions):
    """Two cluster names of this test only; their faults and runs are deleted afterwards."""
    names = [unique_cluster(), unique_cluster()]
    yield names
    with sessions.begin() as session:
        session.execute(delete(FaultRecord).where(FaultRecord.cluster.in_(names)))
        session.execute(delete(Run).where(Run.cluster.in_(names)))


@pytest.fixture
def calls(monkeypatch):
    return install(monkeypatch)


def test_faults_with_none_outstanding_says_so(invoke, clusters):
    result = invoke("faults", "--cluster", clusters[0])

    assert result.exit_code == 0, result.output
    assert result.stdout == "no outstanding fault\n"


def test_faults_lists_each_fault_with_its_age_its_run_and_whether_its_owner_runs(
        invoke, sessions, clusters, tmp_path):
    cluster, now, pid = clusters[0], time.time(), dead_pid()
    with sessions() as session:
        run_id = make_run(session, cluster=cluster).id
    PgFaultLedger(sessions).add(fault(cluster, "daemon:osd.1", at=now - 125, pid=pid,
                                      run_id=run_id))
    FileLedger(tmp_path / "faults.json").add(fault(cluster, "disk:node2", at=now - 3 * 3600))

    result = invoke("faults", "--cluster", cluster)

    host = socket.gethostname()
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        f" 2 min  {cluster} daemon:osd.1         osd.1 broken (run {run_id}); injected by "
        f"pid {pid} on {host}, dead",
        f"   3 h  {cluster} disk:node2           node2 broken; injected by pid {os.getpid()} "
        f"on {host}, running"]
    rows = json.loads(invoke("faults", "--cluster", cluster, "--json").stdout)
    assert [(r["ledger"], r["key"], r["run_id"], r["owner_alive"]) for r in rows] == [
        ("database", "daemon:osd.1", run_id, False), ("file", "disk:node2", None, True)]
    assert 125 <= rows[0]["age_s"] < 185


def test_heal_with_none_outstanding_says_so_and_succeeds(invoke, clusters):
    result = invoke("heal", "--cluster", clusters[0])

    assert result.exit_code == 0, result.output
    assert result.stdout == "no outstanding fault\n"


def test_heal_restores_newest_first_and_exits_1_when_a_restore_fails(
        invoke, sessions, clusters, calls):
    cluster = clusters[0]
    with sessions() as session:
        run_id = make_run(session, cluster=cluster).id
    ledger = PgFaultLedger(sessions)
    ledger.add(fault(cluster, "daemon:osd.1", at=1.0, run_id=run_id))
    ledger.add(fault(cluster, "disk:node2", at=2.0, restore=BROKEN))

    result = invoke("heal", "--cluster", cluster, "--inventory", "/srv/inventory.yaml")

    assert result.exit_code == 1, result.output
    assert result.stdout.splitlines() == [f"FAILED: node2 broken: {UNREACHABLE}",
                                          f"restored: osd.1 broken (run {run_id})"]
    configuration = {"faultline_cluster": cluster, "faultline_inventory": "/srv/inventory.yaml"}
    assert calls[1] == ("start", {"target": "daemon:osd.1"}, configuration)
    assert [e.key for e in ledger.outstanding(cluster)] == ["disk:node2"]


def test_heal_also_restores_the_faults_in_this_machines_ledger_file(invoke, clusters, calls,
                                                                    tmp_path):
    local = FileLedger(tmp_path / "faults.json")
    local.add(fault(clusters[0], "daemon:osd.3", at=1.0))

    result = invoke("heal", "--cluster", clusters[0], "--json")

    assert result.exit_code == 0, result.output
    [healed] = json.loads(result.stdout)
    assert (healed["ledger"], healed["key"], healed["restored"]) == ("file", "daemon:osd.3", True)
    assert local.outstanding() == []


def _fake_run(calls: list, monkeypatch: pytest.MonkeyPatch) -> None:
    def run(path, cluster, inventory):
        calls.append(("run", path, cluster))
        return {"status": "aborted"}  # ends before a run is recorded: nothing else to fake

    monkeypatch.setattr(launch, "run", run)


def test_run_first_heals_the_faults_a_dead_run_left_in_its_cluster(
        invoke, sessions, clusters, calls, monkeypatch):
    cluster, ledger = clusters[0], PgFaultLedger(sessions)
    ledger.add(fault(cluster, "daemon:osd.1", at=1.0, pid=dead_pid()))
    ledger.add(fault(cluster, "disk:node2", at=2.0))  # its run is still going: left alone
    ledger.add(fault(clusters[1], "power:node3", at=3.0, pid=dead_pid()))  # another cluster
    _fake_run(calls, monkeypatch)

    result = invoke("run", EXPERIMENT, "--cluster", cluster)

    assert [c[0] for c in calls] == ["start", "run"]
    assert result.stderr.splitlines()[0] == "healed a fault left by a run that died: osd.1 broken"
    assert [e.key for e in ledger.outstanding(cluster)] == ["disk:node2"]
    assert len(ledger.outstanding(clusters[1])) == 1


def test_run_does_not_start_when_a_dead_runs_fault_cannot_be_healed(
        invoke, sessions, clusters, calls, monkeypatch):
    PgFaultLedger(sessions).add(fault(clusters[0], "disk:node2", at=1.0, pid=dead_pid(),
                                      restore=BROKEN))
    _fake_run(calls, monkeypatch)

    result = invoke("run", EXPERIMENT, "--cluster", clusters[0])

    assert result.exit_code == 2
    assert result.stderr.strip() == (f"error: could not heal node2 broken: {UNREACHABLE}; "
                                     "run `faultline heal`")
    assert [c[0] for c in calls] == ["broken"]


def test_run_of_a_bad_experiment_file_heals_nothing(invoke, sessions, clusters, calls):
    PgFaultLedger(sessions).add(fault(clusters[0], "daemon:osd.1", at=1.0, pid=dead_pid()))

    result = invoke("run", "experiments/absent.json", "--cluster", clusters[0])

    assert result.exit_code == 2
    assert result.stderr.strip() == "error: experiment file experiments/absent.json does not exist"
    assert calls == []


def test_suite_first_heals_the_faults_dead_runs_left_in_each_of_its_clusters(
        invoke, sessions, clusters, calls, monkeypatch, tmp_path):
    inventory = tmp_path / "inventory.json"  # YAML reads JSON
    inventory.write_text(json.dumps({"clusters": {
        clusters[0]: {"kind": "ceph", "chaos": "allowed",
                      "nodes": [{"name": "n1", "address": "10.0.0.1"}],
                      "client": {"conf": "/etc/ceph/ceph.conf"}},
        clusters[1]: {"kind": "swift", "chaos": "allowed",
                      "nodes": [{"name": "n1", "address": "10.0.0.2"}]}}}))
    suite = tmp_path / "suite.json"
    suite.write_text(json.dumps({"title": "heal first", "runs": [
        {"name": "a", "experiment": EXPERIMENT, "cluster": clusters[0]},
        {"name": "b", "experiment": EXPERIMENT, "cluster": clusters[1]}]}))
    for cluster in clusters:
        PgFaultLedger(sessions).add(fault(cluster, "daemon:osd.1", at=1.0, pid=dead_pid()))
    _fake_run(calls, monkeypatch)

    result = invoke("suite", str(suite), "--inventory", str(inventory))

    assert result.exit_code == 1, result.output  # the fake runs record nothing
    assert [c[0] for c in calls] == ["start", "start", "run", "run"]
    assert [c[2]["faultline_cluster"] for c in calls[:2]] == clusters
    assert result.stderr.splitlines()[:2] == [
        "healed a fault left by a run that died: osd.1 broken"] * 2
