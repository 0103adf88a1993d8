"""The fault ledger in PostgreSQL, and `heal` replaying restores from it (no lab needed)."""

from __future__ import annotations

import os
import uuid

import pytest
from alembic import command
from factories import make_run
from fake_restores import UNREACHABLE, dead_pid, fault, install, unique_cluster
from sqlalchemy import create_engine, delete, make_url, select, text

from clusters.safety import fault_ledger
from service.runs.heal import heal, heal_orphans
from service.store import db
from service.store.fault_ledger import PgFaultLedger, database_ledger, use_database_ledger
from service.store.models import FaultRecord, Run


@pytest.fixture
def cluster(own_cluster):
    return own_cluster


@pytest.fixture
def ledger(sessions):
    """The database ledger, installed as this process's ledger for the test."""
    with database_ledger(sessions) as ledger:
        yield ledger


@pytest.fixture
def calls(monkeypatch):
    return install(monkeypatch)


def test_the_migrations_match_the_models(database_url):
    command.check(db.alembic_config(database_url))  # raises if a migration is missing


def test_an_added_fault_is_committed_before_add_returns(sessions, cluster, database_url):
    entry = fault(cluster, "daemon:osd.1", at=1.0)

    PgFaultLedger(sessions).add(entry)

    # another connection sees it: it would survive this process dying right after
    engine = create_engine(database_url)
    with engine.connect() as other:
        found = other.execute(text("SELECT key FROM faults WHERE id = :id"), {"id": entry.id})
        assert found.scalar_one() == "daemon:osd.1"
    engine.dispose()
    assert PgFaultLedger(sessions).outstanding(cluster) == [entry]


def test_strike_removes_every_fault_of_that_cluster_and_key_and_counts_them(sessions,
                                                                             cluster):
    ledger, other = PgFaultLedger(sessions), unique_cluster()
    for entry in (fault(cluster, "daemon:osd.1", at=1.0), fault(cluster, "daemon:osd.1", at=2.0),
                  fault(cluster, "disk:node2", at=3.0), fault(other, "daemon:osd.1", at=4.0)):
        ledger.add(entry)
    try:
        assert ledger.strike(cluster, "daemon:osd.1") == 2
        assert ledger.strike(cluster, "daemon:osd.1") == 0
        assert [e.key for e in ledger.outstanding(cluster)] == ["disk:node2"]
        assert [e.key for e in ledger.outstanding(other)] == ["daemon:osd.1"]
    finally:
        ledger.strike(other, "daemon:osd.1")


def test_outstanding_is_oldest_first(sessions, cluster):
    ledger = PgFaultLedger(sessions)
    for key, at in (("power:node3", 30.0), ("daemon:osd.1", 10.0), ("disk:node2", 20.0)):
        ledger.add(fault(cluster, key, at=at))

    assert [e.key for e in ledger.outstanding(cluster)] == [
        "daemon:osd.1", "disk:node2", "power:node3"]
    keys = [e.key for e in ledger.outstanding() if e.cluster == cluster]
    assert keys == ["daemon:osd.1", "disk:node2", "power:node3"]


def test_a_fault_recorded_during_a_run_names_the_run_and_outlives_it(sessions, cluster):
    with sessions() as session:
        run_id = make_run(session, cluster=cluster).id
    use_database_ledger(sessions, run_id=run_id)
    try:
        recorded = fault_ledger.record(cluster, "daemon:osd.1", "osd.1 killed on node2",
                                       "actions.ceph.start_osd", {"osd_id": 1})
    finally:
        fault_ledger.set_backend(None)
    assert recorded.run_id == run_id
    assert PgFaultLedger(sessions).outstanding(cluster) == [recorded]

    with sessions.begin() as session:
        session.execute(delete(Run).where(Run.id == run_id))

    # the fault is still in place, so its record stays, without the run
    with sessions() as session:
        row = session.execute(select(FaultRecord).where(FaultRecord.id == recorded.id)).scalar_one()
        assert row.run_id is None


def test_heal_replays_each_restore_with_its_arguments_and_cluster_newest_first(
        ledger, cluster, calls):
    ledger.add(fault(cluster, "daemon:osd.1", at=1.0, arguments={"osd_id": 1}))
    ledger.add(fault(cluster, "disk:node2", at=2.0, arguments={"node": "node2"}))
    ledger.add(fault(cluster, "power:node3", at=3.0, arguments={}))

    results = heal(cluster, "/etc/faultline/inventory.yaml")

    configuration = {"faultline_cluster": cluster,
                     "faultline_inventory": "/etc/faultline/inventory.yaml"}
    assert calls == [("start", {}, configuration), ("start", {"node": "node2"}, configuration),
                     ("start", {"osd_id": 1}, configuration)]
    assert [(r["key"], r["restored"], r["error"], r["output"]) for r in results] == [
        ("power:node3", True, None, {"started": []}),
        ("disk:node2", True, None, {"started": ["node2"]}),
        ("daemon:osd.1", True, None, {"started": [1]})]
    assert fault_ledger.outstanding(cluster) == []


def test_a_failing_restore_is_reported_and_its_fault_stays_in_the_ledger(ledger, cluster,
                                                                         calls):
    failing = fault(cluster, "disk:node2", at=2.0, restore="actions.fake_restore.broken")
    ledger.add(fault(cluster, "daemon:osd.1", at=1.0))
    ledger.add(failing)

    results = heal(cluster)

    assert [c[0] for c in calls] == ["broken", "start"]  # the failure stops nothing
    assert calls[0][2] == {"faultline_cluster": cluster, "faultline_inventory": ""}
    assert results[0] == {"id": failing.id, "cluster": cluster, "key": "disk:node2",
                          "description": "node2 broken", "run_id": None, "restored": False,
                          "error": UNREACHABLE, "output": None}
    assert fault_ledger.outstanding(cluster) == [failing]


@pytest.mark.parametrize(("restore", "error"), [
    ("os.remove", "refused to call 'os.remove': a restore must be a function under actions."),
    ("actions.fake_restore.absent", "actions.fake_restore.absent is not a function"),
    ("actions.no_such_module.start", "No module named 'actions.no_such_module'"),
])
def test_heal_calls_nothing_but_a_function_under_actions(ledger, cluster, calls, restore,
                                                         error, tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("still here")
    # as if the row had been written by hand: record() itself refuses such a restore
    ledger.add(fault(cluster, "daemon:osd.1", at=1.0, restore=restore,
                     arguments={"path": str(victim)}))

    [result] = heal(cluster)

    assert (result["restored"], result["error"]) == (False, error)
    assert victim.exists() and calls == []
    assert len(fault_ledger.outstanding(cluster)) == 1


def test_the_same_thing_broken_twice_is_restored_once(ledger, cluster, calls):
    older, newer = (fault(cluster, "daemon:osd.1", at=1.0), fault(cluster, "daemon:osd.1",
                                                                   at=2.0))
    ledger.add(older)
    ledger.add(newer)

    results = heal(cluster)

    assert len(calls) == 1
    assert [(r["id"], r["restored"], r["output"]) for r in results] == [
        (newer.id, True, {"started": ["daemon:osd.1"]}),
        (older.id, True, {"restored_with": newer.id})]


def test_heal_orphans_leaves_the_faults_of_a_run_still_going(ledger, cluster, calls):
    ledger.add(fault(cluster, "daemon:osd.1", at=1.0, pid=dead_pid()))
    ledger.add(fault(cluster, "disk:node2", at=2.0, pid=os.getpid()))

    results = heal_orphans(cluster, None)

    assert [(r["key"], r["restored"]) for r in results] == [("daemon:osd.1", True)]
    assert [e.key for e in fault_ledger.outstanding(cluster)] == ["disk:node2"]


def test_heal_orphans_leaves_what_a_live_run_broke_again_after_a_dead_one(ledger, cluster,
                                                                         calls):
    ledger.add(fault(cluster, "daemon:osd.1", at=1.0, pid=dead_pid()))
    ledger.add(fault(cluster, "daemon:osd.1", at=2.0, pid=os.getpid()))

    assert heal_orphans(cluster, None) == []
    assert calls == [] and len(fault_ledger.outstanding(cluster)) == 2


def test_heal_with_nothing_outstanding_does_nothing(ledger, cluster, calls):
    assert heal(cluster) == []
    assert calls == []


FAULT = {"daemon": "osd.1", "intent": "down", "supervisor": "systemd",
         "unit": "ceph-osd@1.service", "pid": 4242, "restarts_before": 0, "masked": True}


def test_the_record_is_stored_beside_the_arguments_and_read_back(sessions, cluster):
    entry = fault(cluster, "daemon:osd.1", at=1.0, arguments={"osd_id": 1},
                  record={"fault": FAULT})

    PgFaultLedger(sessions).add(entry)

    (read,) = PgFaultLedger(sessions).outstanding(cluster)
    assert (read.arguments, read.record) == ({"osd_id": 1}, {"fault": FAULT})
    with sessions() as session:
        row = session.execute(select(FaultRecord).where(FaultRecord.id == entry.id)).scalar_one()
        assert (row.arguments, row.record) == ({"osd_id": 1}, {"fault": FAULT})


def test_recorded_reads_the_record_from_the_database_ledger(ledger, cluster):
    fault_ledger.record(cluster, "throttle:osd.1", "slow", "actions.throttle.unthrottle_disk",
                        {"daemon": "osd.1"}, {"back_to": "/system.slice"})

    assert fault_ledger.recorded(cluster, "throttle:osd.1") == {"back_to": "/system.slice"}
    assert fault_ledger.recorded(cluster, "throttle:osd.2") is None


def test_a_row_written_before_the_record_is_read_with_its_what_as_the_record(
        sessions, cluster, database_url):
    entry = fault(cluster, "scale:osd.4", at=1.0, arguments={"osd_id": 4})
    PgFaultLedger(sessions).add(entry)
    # as the code before revision 0020 wrote it: the record inside the arguments
    engine = create_engine(database_url)
    with engine.begin() as conn:
        conn.execute(text("UPDATE faults SET arguments = CAST(:a AS jsonb), record = '{}' "
                          "WHERE id = :id"),
                     {"a": '{"osd_id": 4, "added": {"osd_id": 4, "node": "node1"}}',
                      "id": entry.id})
    engine.dispose()

    (read,) = PgFaultLedger(sessions).outstanding(cluster)

    assert (read.arguments, read.record) == ({"osd_id": 4},
                                             {"added": {"osd_id": 4, "node": "node1"}})


def test_heal_replays_an_old_entry_with_its_which_arguments_only(ledger, cluster, calls,
                                                                  database_url):
    entry = fault(cluster, "daemon:osd.1", at=1.0, arguments={"osd_id": 1})
    ledger.add(entry)
    engine = create_engine(database_url)
    with engine.begin() as conn:
        conn.execute(text("UPDATE faults SET arguments = CAST(:a AS jsonb) WHERE id = :id"),
                     {"a": '{"osd_id": 1, "fault": {"unit": "ceph-osd@1.service"}}',
                      "id": entry.id})
    engine.dispose()

    (result,) = heal(cluster)

    assert result["restored"], result
    assert [(name, arguments) for name, arguments, _ in calls] == [("start", {"osd_id": 1})]
    assert ledger.outstanding(cluster) == []


def test_the_record_migration_downgrades_by_merging_each_record_into_its_arguments(
        database_url):
    """Revision 0020's downgrade keeps an outstanding fault healable by the code before it."""
    name = f"faultline_test_record_{uuid.uuid4().hex[:8]}"
    admin = create_engine(database_url, isolation_level="AUTOCOMMIT")
    fresh = make_url(database_url).set(database=name).render_as_string(hide_password=False)
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        config = db.alembic_config(fresh)
        command.upgrade(config, "0020")
        engine = create_engine(fresh)
        with engine.begin() as conn:
            conn.execute(text(
                "INSERT INTO faults (id, cluster, key, description, restore, arguments, "
                "record, injected_at, owner_pid, owner_host) VALUES ('a', 'lab', "
                "'throttle:osd.1', 'slow', 'actions.throttle.unthrottle_disk', "
                "'{\"daemon\": \"osd.1\"}', '{\"back_to\": \"/s\"}', 1, 1, 'h')"))
        command.downgrade(config, "0017")
        with engine.connect() as conn:
            assert conn.execute(text("SELECT arguments FROM faults")).scalar_one() == {
                "daemon": "osd.1", "back_to": "/s"}
        command.upgrade(config, "0020")
        with engine.connect() as conn:
            assert conn.execute(text("SELECT record FROM faults")).scalar_one() == {}
        engine.dispose()
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()
