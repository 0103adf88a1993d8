"""`faultline clean` refuses what it must not touch, in one line and changing nothing (real
PostgreSQL, no lab; the deletes themselves are checked on both labs, in test_ceph_kill_osd
and test_swift_kill_object_server)."""

from __future__ import annotations

import pytest
from factories import make_run

from service.jobs.cluster_lock import ClusterLock
from service.store.models import LedgerEntry, Run


@pytest.fixture
def cluster(own_cluster):
    return own_cluster


def _made(sessions, cluster: str, status: str) -> int:
    with sessions() as session:
        run = make_run(session, cluster=cluster, status=status)
        session.add(LedgerEntry(run_id=run.id, container="faultline-000", name="o1", size=4))
        session.commit()
        return run.id


def _unchanged(sessions, run_id: int) -> None:
    with sessions() as session:
        assert session.get(Run, run_id).objects_removed is None


@pytest.mark.parametrize("status", ["queued", "running"])
def test_a_run_not_ended_is_not_cleaned(invoke, sessions, cluster, status):
    run_id = _made(sessions, cluster, status)

    done = invoke("clean", str(run_id))

    assert done.exit_code == 2
    assert done.output == f"error: run {run_id} is {status}; clean it once it has ended\n"
    _unchanged(sessions, run_id)


def test_a_run_that_does_not_exist_is_one_error(invoke):
    done = invoke("clean", "2000000000")

    assert done.exit_code == 2
    assert done.output == "error: run 2000000000 does not exist\n"


def test_a_cluster_not_in_the_inventory_is_one_error(invoke, sessions, cluster, api_inventory):
    run_id = _made(sessions, cluster, "completed")

    done = invoke("clean", str(run_id), "--inventory", str(api_inventory))

    assert done.exit_code == 2
    assert done.output.startswith("error: ") and cluster in done.output, done.output
    assert done.output.count("\n") == 1
    _unchanged(sessions, run_id)


def test_a_cluster_another_run_holds_is_not_loaded_with_deletes(invoke, sessions, cluster,
                                                                database_url, tmp_path,
                                                                api_inventory):
    run_id = _made(sessions, cluster, "completed")
    inventory = tmp_path / "inventory.yaml"
    inventory.write_text(api_inventory.read_text().replace("  lab-ceph:", f"  {cluster}:"))
    lock = ClusterLock(database_url, cluster).acquire(sessions)
    try:
        done = invoke("clean", str(run_id), "--inventory", str(inventory))
    finally:
        lock.release()

    assert done.exit_code == 2
    assert done.output.startswith(f"error: cluster {cluster} is busy"), done.output
    _unchanged(sessions, run_id)


def test_a_ledger_naming_another_container_deletes_nothing(invoke, sessions, cluster,
                                                           api_inventory):
    run_id = _made(sessions, cluster, "completed")
    with sessions.begin() as session:
        session.add(LedgerEntry(run_id=run_id, container="customer-data", name="x", size=4))

    done = invoke("clean", str(run_id), "--inventory", str(api_inventory))

    assert done.exit_code == 2
    assert "names containers its workload never wrote (customer-data)" in done.output
    _unchanged(sessions, run_id)
