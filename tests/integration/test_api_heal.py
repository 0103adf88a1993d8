"""The heal API: the outstanding faults of the ledgers, and a heal queued for the workers
(a `heal_cluster` job holding the cluster's lock); the web process never heals itself."""

from __future__ import annotations

import asyncio
import time
import uuid

import pytest
from fake_restores import fault as fault_entry
from fake_restores import install, unique_cluster
from sqlalchemy import delete, text

from service.jobs.cluster_lock import ClusterBusy, ClusterLock
from service.runs import heal_process
from service.store.fault_ledger import PgFaultLedger
from service.store.models import FaultRecord


def _jobs(sessions) -> int:
    with sessions() as session:
        return session.execute(text("SELECT count(*) FROM procrastinate_jobs")).scalar_one()


@pytest.fixture
def fault(sessions):
    """A fault in the database's ledger, on a cluster name of this test only."""
    record = FaultRecord(id=uuid.uuid4().hex, cluster=f"api-{uuid.uuid4().hex[:8]}",
                         key="daemon:osd.1", description="osd.1 killed (SIGKILL)",
                         restore="actions.ceph.start_osd", arguments={"osd_id": 1},
                         injected_at=time.time() - 90, owner_pid=2 ** 22 + 1,
                         owner_host="elsewhere.example")
    with sessions.begin() as session:
        session.add(record)
    yield record
    with sessions.begin() as session:
        session.execute(delete(FaultRecord).where(FaultRecord.id == record.id))


@pytest.fixture
def heal_jobs(sessions):
    """Ids of heal jobs a test deferred; deleted afterwards (no worker takes them here)."""
    ids: list[int] = []
    yield ids
    with sessions.begin() as session:
        session.execute(text("DELETE FROM procrastinate_jobs WHERE id = ANY(:ids)"),
                        {"ids": ids})


def test_outstanding_faults_are_listed_as_faultline_faults_shows_them(api_as, fault):
    response = api_as("viewer").get("/api/v1/faults", query_string={"cluster": fault.cluster})

    assert response.status_code == 200
    [shown] = response.json["items"]
    assert {k: shown[k] for k in ("id", "cluster", "key", "description", "restore",
                                  "arguments", "ledger", "owner_alive", "run_id")} == {
        "id": fault.id, "cluster": fault.cluster, "key": "daemon:osd.1",
        "description": "osd.1 killed (SIGKILL)", "restore": "actions.ceph.start_osd",
        "arguments": {"osd_id": 1}, "ledger": "database", "owner_alive": None,
        "run_id": None}
    assert 89 <= shown["age_s"] < 200


def test_a_heal_is_queued_as_a_job_that_holds_the_cluster_lock(api_as, sessions, heal_jobs):
    operator = api_as("operator")

    response = operator.post("/api/v1/heal", json={"cluster": "lab-ceph"})

    assert response.status_code == 202, response.json
    job_id = response.json["job_id"]
    heal_jobs.append(job_id)
    assert response.json == {"job_id": job_id, "cluster": "lab-ceph", "status": "todo",
                             "url": f"/api/v1/heal/{job_id}"}
    with sessions() as session:
        job = session.execute(text("SELECT task_name, lock, status, queue_name, args FROM "
                                   "procrastinate_jobs WHERE id = :id"),
                              {"id": job_id}).mappings().one()
    assert (job["task_name"], job["lock"], job["status"], job["queue_name"]) == (
        "faultline:heal_cluster", "cluster:lab-ceph", "todo", "runs")
    assert job["args"]["cluster"] == "lab-ceph"
    assert api_as("viewer").get(f"/api/v1/heal/{job_id}").json == {
        "job_id": job_id, "cluster": "lab-ceph", "status": "todo"}


@pytest.mark.parametrize(("body", "message"), [
    ({"cluster": "atlantis"},
     "unknown cluster 'atlantis' in {inventory} (known: lab-ceph, lab-swift)"),
    ({}, "field 'cluster' is required"),
    ({"cluster": ["lab-ceph"]}, "field 'cluster' must be a string, not [\"lab-ceph\"]"),
])
def test_a_bad_heal_request_is_400_and_queues_nothing(api_as, sessions, api_inventory, body,
                                                      message):
    before = _jobs(sessions)

    response = api_as("operator").post("/api/v1/heal", json=body)

    assert (response.status_code, response.json) == (
        400, {"error": message.format(inventory=api_inventory)})
    assert _jobs(sessions) == before


def test_a_heal_job_that_does_not_exist_is_404(api_as):
    response = api_as("viewer").get("/api/v1/heal/987654321")

    assert (response.status_code, response.json) == (
        404, {"error": "heal job 987654321 does not exist"})


@pytest.fixture
def ledger_fault(sessions, monkeypatch, tmp_path):
    """A fault of a cluster of this test only in the database's ledger, restored by a fake
    restore that records its calls; this machine's ledger file is an empty one."""
    monkeypatch.setenv("FAULTLINE_HOME", str(tmp_path))
    calls = install(monkeypatch)
    entry = fault_entry(unique_cluster(), "daemon:osd.1", at=time.time())
    PgFaultLedger(sessions).add(entry)
    yield entry, calls
    with sessions.begin() as session:
        session.execute(delete(FaultRecord).where(FaultRecord.cluster == entry.cluster))


def test_the_heal_job_restores_the_clusters_faults_while_it_holds_the_cluster(
        database_url, sessions, ledger_fault):
    entry, calls = ledger_fault

    results = heal_process.heal_holding_cluster(database_url, entry.cluster, None, wait_s=0)

    assert [(r["key"], r["restored"], r["ledger"]) for r in results] == [
        ("daemon:osd.1", True, "database")]
    assert [call[0] for call in calls] == ["start"]
    assert PgFaultLedger(sessions).outstanding(entry.cluster) == []


def test_the_heal_job_does_not_heal_while_a_run_holds_the_cluster(database_url, sessions,
                                                                   ledger_fault):
    entry, calls = ledger_fault
    run_lock = ClusterLock(database_url, entry.cluster).acquire(sessions)
    try:
        with pytest.raises(ClusterBusy, match=f"cluster {entry.cluster} is busy"):
            heal_process.heal_holding_cluster(database_url, entry.cluster, None, wait_s=0)
    finally:
        run_lock.release()

    assert calls == []
    assert [e.id for e in PgFaultLedger(sessions).outstanding(entry.cluster)] == [entry.id]


def test_the_heal_job_runs_in_a_process_of_its_own(database_url, monkeypatch, tmp_path):
    monkeypatch.setenv("FAULTLINE_HOME", str(tmp_path))  # this machine's ledger file: empty

    results = asyncio.run(heal_process.heal_in_process(database_url, unique_cluster(), None))

    assert results == []  # nothing to heal on a cluster of its own, and no error
