"""A worker's auto-heal, one cluster's pass (service.runs.orphan_heal) and its loop
(service.worker.auto_heal): the faults of dead runs restored under the cluster's lock, a live
run's left alone, each heal said on its run (report, API, run page). Real PostgreSQL, no lab:
the restores are the fake ones of fake_restores."""

from __future__ import annotations

import logging
import time

import pytest
from factories import make_run
from fake_restores import UNREACHABLE, dead_pid, fault, install, unique_cluster
from sqlalchemy import delete, select

from service.accounts.models import AuditEvent
from service.jobs.cluster_lock import ClusterLock
from service.results.figures import get_run
from service.results.report import format_report, report_dict
from service.runs import orphan_heal
from service.store.fault_ledger import PgFaultLedger
from service.store.models import Event, FaultRecord, Run
from service.worker.auto_heal import AutoHeal

BROKEN = "actions.fake_restore.broken"
WORKER = "node7-4242"


@pytest.fixture
def cluster(sessions, monkeypatch, tmp_path):
    """A cluster name of this test only (its faults and runs deleted afterwards), with an
    empty ledger file of its own for this machine."""
    monkeypatch.setenv("FAULTLINE_HOME", str(tmp_path))
    name = unique_cluster()
    yield name
    with sessions.begin() as session:
        session.execute(delete(FaultRecord).where(FaultRecord.cluster == name))
        session.execute(delete(Run).where(Run.cluster == name))


@pytest.fixture
def calls(monkeypatch):
    return install(monkeypatch)


def run_on(sessions, cluster: str, status: str) -> int:
    with sessions() as session:
        return make_run(session, cluster=cluster, status=status).id


def heal_events(sessions, run_id: int) -> list[Event]:
    with sessions() as session:
        return list(session.execute(select(Event).where(
            Event.run_id == run_id, Event.kind.in_(orphan_heal.HEAL_KINDS))
            .order_by(Event.id)).scalars())


def outstanding(sessions, cluster: str) -> list[str]:
    return [e.id for e in PgFaultLedger(sessions).outstanding(cluster)]


def test_the_fault_of_a_run_whose_process_died_is_restored_and_said_on_the_run(
        database_url, sessions, cluster, calls):
    run_id = run_on(sessions, cluster, "interrupted")
    PgFaultLedger(sessions).add(fault(cluster, "daemon:osd.1", at=time.time(), pid=dead_pid(),
                                      run_id=run_id))

    done = orphan_heal.heal_cluster(database_url, cluster, WORKER)

    assert done["busy"] is None
    assert [(r["key"], r["restored"], r["ledger"]) for r in done["results"]] == [
        ("daemon:osd.1", True, "database")]
    assert [c[0] for c in calls] == ["start"]
    assert outstanding(sessions, cluster) == []
    [event] = heal_events(sessions, run_id)
    assert event.kind == "healed"
    assert {k: event.detail[k] for k in ("name", "key", "status", "by", "worker", "error")} == {
        "name": "osd.1 broken", "key": "daemon:osd.1", "status": "restored",
        "by": "worker auto-heal", "worker": WORKER, "error": None}
    assert abs(event.detail["at"] - time.time()) < 60


def test_an_auto_heal_is_on_the_audit_trail_with_the_worker_that_did_it(
        database_url, sessions, cluster, calls):
    run_id = run_on(sessions, cluster, "interrupted")
    PgFaultLedger(sessions).add(fault(cluster, "daemon:osd.1", at=time.time(), pid=dead_pid(),
                                      run_id=run_id))

    orphan_heal.heal_cluster(database_url, cluster, WORKER)

    with sessions.begin() as session:
        rows = session.execute(select(AuditEvent).where(AuditEvent.subject == cluster)).scalars()
        found = [(e.actor, e.action, e.detail["run_id"], e.detail["restored"]) for e in rows]
        session.execute(delete(AuditEvent).where(AuditEvent.subject == cluster))
    assert found == [(f"worker auto-heal ({WORKER})", "cluster.heal", run_id, True)]


def test_a_live_runs_fault_is_never_restored(database_url, sessions, cluster, calls):
    run_id = run_on(sessions, cluster, "running")  # run by this process: alive
    entry = fault(cluster, "daemon:osd.1", at=time.time(), run_id=run_id)
    PgFaultLedger(sessions).add(entry)

    done = orphan_heal.heal_cluster(database_url, cluster, WORKER)

    assert (done["results"], calls) == ([], [])
    assert outstanding(sessions, cluster) == [entry.id]
    assert orphan_heal.pending(sessions).count(cluster) == 0


def test_a_fault_from_another_host_whose_run_runs_is_never_restored(database_url, sessions,
                                                                     cluster, calls):
    run_id = run_on(sessions, cluster, "running")
    entry = fault(cluster, "daemon:osd.1", at=time.time(), run_id=run_id)
    elsewhere = FaultRecord(**{**entry.as_dict(), "owner_host": "driver-7.example"})
    with sessions.begin() as session:
        session.add(elsewhere)

    done = orphan_heal.heal_cluster(database_url, cluster, WORKER)

    assert (done["results"], calls) == ([], [])
    assert outstanding(sessions, cluster) == [entry.id]


def test_a_cluster_a_run_holds_is_left_for_the_next_pass(database_url, sessions, cluster,
                                                         calls):
    run_id = run_on(sessions, cluster, "interrupted")
    entry = fault(cluster, "daemon:osd.1", at=time.time(), pid=dead_pid(), run_id=run_id)
    PgFaultLedger(sessions).add(entry)
    run_lock = ClusterLock(database_url, cluster).acquire(sessions)
    try:
        done = orphan_heal.heal_cluster(database_url, cluster, WORKER)
    finally:
        run_lock.release()

    assert done["busy"].startswith(f"cluster {cluster} is busy")
    assert (done["results"], calls) == ([], [])
    assert outstanding(sessions, cluster) == [entry.id]
    assert heal_events(sessions, run_id) == []


def test_a_failed_restore_stays_in_the_ledger_and_is_said_once(database_url, sessions, cluster,
                                                               calls):
    run_id = run_on(sessions, cluster, "interrupted")
    entry = fault(cluster, "daemon:osd.1", at=time.time(), pid=dead_pid(), run_id=run_id,
                  restore=BROKEN)
    PgFaultLedger(sessions).add(entry)

    for _ in range(2):  # two passes, one failure said
        done = orphan_heal.heal_cluster(database_url, cluster, WORKER)
        assert [(r["restored"], r["error"]) for r in done["results"]] == [(False, UNREACHABLE)]

    assert outstanding(sessions, cluster) == [entry.id]
    [event] = heal_events(sessions, run_id)
    assert (event.kind, event.detail["error"], event.detail["status"]) == (
        "heal_failed", UNREACHABLE, "failed")


def test_the_report_shows_each_heal_and_each_failure(database_url, sessions, cluster, calls):
    run_id = run_on(sessions, cluster, "interrupted")
    PgFaultLedger(sessions).add(fault(cluster, "daemon:osd.1", at=time.time(), pid=dead_pid(),
                                      run_id=run_id))
    PgFaultLedger(sessions).add(fault(cluster, "disk:node2", at=time.time(), pid=dead_pid(),
                                      run_id=run_id, restore=BROKEN))
    orphan_heal.heal_cluster(database_url, cluster, WORKER)

    with sessions() as session:
        data = report_dict(get_run(session, run_id))

    assert [(h["fault"], h["restored"], h["by"], h["worker"], h["error"])
            for h in data["heals"]] == [
        ("node2 broken", False, "worker auto-heal", WORKER, UNREACHABLE),
        ("osd.1 broken", True, "worker auto-heal", WORKER, None)]
    text = format_report(data)
    assert "  healed: osd.1 broken, restored by worker auto-heal (node7-4242) at " in text
    assert ("  heal FAILED: node2 broken, tried by worker auto-heal (node7-4242) at "
            in text)
    assert f": {UNREACHABLE}; it is still in the fault ledger" in text


def test_the_api_the_run_page_and_its_download_show_the_heal(database_url, sessions, cluster,
                                                             calls, api_as, viewer_client):
    run_id = run_on(sessions, cluster, "interrupted")
    PgFaultLedger(sessions).add(fault(cluster, "daemon:osd.1", at=time.time(), pid=dead_pid(),
                                      run_id=run_id))
    orphan_heal.heal_cluster(database_url, cluster, WORKER)

    detail = api_as("viewer").get(f"/api/v1/runs/{run_id}").json
    events = api_as("viewer").get(f"/api/v1/runs/{run_id}/events").json["events"]
    page = viewer_client.get(f"/runs/{run_id}").get_data(as_text=True)
    download = viewer_client.get(f"/runs/{run_id}/report.html").get_data(as_text=True)

    [heal] = detail["heals"]
    assert (heal["fault"], heal["restored"], heal["by"]) == ("osd.1 broken", True,
                                                            "worker auto-heal")
    assert [e["detail"]["status"] for e in events if e["kind"] == "healed"] == ["restored"]
    for html in (page, download):
        assert '<ul id="heals">' in html
        assert "Restored:\n    osd.1 broken, by worker auto-heal (node7-4242) at " in html


def test_a_workers_pass_closes_the_dead_run_and_heals_in_a_process_of_its_own(
        database_url, sessions, cluster, caplog):
    # a restore the heal's own process cannot import: the pass reports it, never raises
    with sessions() as session:
        run_id = make_run(session, cluster=cluster, status="running").id
    with sessions.begin() as session:  # its process died (a pid no process has)
        session.get(Run, run_id).owner_pid = dead_pid()
        session.get(Run, run_id).owner_start = None
    entry = fault(cluster, "daemon:osd.1", at=time.time(), pid=dead_pid(), run_id=run_id,
                  restore="actions.nowhere.start")
    PgFaultLedger(sessions).add(entry)

    with caplog.at_level(logging.INFO):
        results = AutoHeal(database_url, WORKER).heal_once()

    with sessions() as session:
        assert session.get(Run, run_id).status == "interrupted"
    mine = [r for r in results if r["cluster"] == cluster]
    assert [(r["restored"], r["error"]) for r in mine] == [(False, "No module named "
                                                                   "'actions.nowhere'")]
    assert outstanding(sessions, cluster) == [entry.id]
    assert [e.kind for e in heal_events(sessions, run_id)] == ["heal_failed"]
    assert f"auto-heal: FAILED: osd.1 broken (run {run_id}): No module named" in caplog.text
