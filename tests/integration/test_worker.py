"""Runs through the queue with real `faultline worker` processes on the real Ceph lab:
one experiment per cluster at a time, cancel before and during a run, and the
cluster lock that a command-line run meets."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from catalogue import ceph_osds_up, wait_for
from short_runs import pause, short_experiment
from sqlalchemy import select

from service.jobs import run_queue
from service.store.fault_ledger import PgFaultLedger
from service.store.models import Event, Run

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.lab


KILL_OSD = {"type": "action", "name": "kill-osd", "provider": {
    "type": "python", "module": "actions.ceph", "func": "kill_osd", "arguments": {"osd_id": 2}}}
START_OSD = {"type": "action", "name": "start-osd", "provider": {
    "type": "python", "module": "actions.ceph", "func": "start_osd",
    "arguments": {"osd_id": 2}}}


def _run(sessions, run_id: int) -> Run:
    with sessions() as session:
        run = session.get(Run, run_id)
        run.events  # noqa: B018 - load them before the session closes
        return run


def _ended(sessions, run_id: int) -> bool:
    return _run(sessions, run_id).status not in ("queued", "running")


def _enqueue(sessions, queue_app, experiment: dict) -> int:
    return run_queue.enqueue(sessions, queue_app, experiment, cluster="lab-ceph",
                             requested_by="test")


@pytest.mark.full  # 58 s; the cluster lock is in make test (test_cluster_lock, and a command-line
# run refused on a busy cluster below)
def test_two_runs_on_one_cluster_run_one_after_the_other(ceph_cluster, worker, sessions,
                                                         queue_app):
    first = _enqueue(sessions, queue_app, short_experiment("queue first", [pause(8)]))
    second = _enqueue(sessions, queue_app, short_experiment("queue second", [pause(1)]))
    # the worker could take both (concurrency 2), but the cluster's lock holds the second
    wait_for("the first run to start", lambda: _run(sessions, first).status == "running", 120)
    assert _run(sessions, second).status == "queued"
    wait_for("both runs to end", lambda: _ended(sessions, first) and _ended(sessions, second),
             300)
    a, b = _run(sessions, first), _run(sessions, second)
    assert (a.status, b.status) == ("completed", "completed"), (a.error, b.error)
    assert a.ended_at <= b.started_at, "the runs overlapped on one cluster"
    assert a.requested_by == b.requested_by == "test"


def test_a_cancelled_queued_run_never_starts(ceph_cluster, worker, sessions, queue_app):
    first = _enqueue(sessions, queue_app, short_experiment("queue holder", [pause(6)]))
    second = _enqueue(sessions, queue_app, short_experiment("queue cancelled", [pause(1)]))
    wait_for("the first run to start", lambda: _run(sessions, first).status == "running", 120)
    assert run_queue.cancel(sessions, queue_app, second) == "cancelled"
    wait_for("the first run to end", lambda: _ended(sessions, first), 300)
    run = _run(sessions, second)
    assert run.status == "cancelled"
    assert run.events == [] and run.load_started_ts is None  # nothing of it ever ran
    with pytest.raises(run_queue.QueueError, match="is cancelled: there is nothing to cancel"):
        run_queue.cancel(sessions, queue_app, second)


def test_cancelling_a_running_run_plays_its_rollbacks(worker, sessions, queue_app, ceph_cluster):
    run_id = _enqueue(sessions, queue_app, short_experiment(
        "queue cancel mid-fault", [KILL_OSD, pause(600)], rollbacks=[START_OSD],
        restore="start-osd"))
    wait_for("the OSD kill", lambda: any(e.kind == "fault_injected"
                                         for e in _run(sessions, run_id).events), 180)
    assert run_queue.cancel(sessions, queue_app, run_id) == "cancelling"
    wait_for("the run to end", lambda: _ended(sessions, run_id), 240)
    run = _run(sessions, run_id)
    assert run.status == "interrupted", run.error
    kinds = [e.kind for e in run.events]
    assert kinds.index("cancel_requested") < kinds.index("restored")
    assert [r["status"] for r in run.journal["rollbacks"]] == ["succeeded"]
    assert not PgFaultLedger(sessions).outstanding("lab-ceph")  # struck off by its restore
    wait_for("every OSD up", lambda: ceph_osds_up(ceph_cluster) == 4, 120)


def test_a_command_line_run_on_a_busy_cluster_is_refused_and_changes_nothing(
        worker, sessions, queue_app, env, tmp_path):
    holder = _enqueue(sessions, queue_app, short_experiment("queue busy holder", [pause(10)]))
    wait_for("the run to start", lambda: _run(sessions, holder).status == "running", 120)
    path = tmp_path / "busy.json"
    path.write_text(json.dumps(short_experiment("queue refused", [pause(1)])))
    with sessions() as session:
        before = session.execute(select(Run.id).order_by(Run.id.desc()).limit(1)).scalar()
    done = subprocess.run([sys.executable, "-m", "service", "run", str(path),
                           "--cluster", "lab-ceph"],
                          env=env, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode != 0
    assert f"cluster lab-ceph is busy: run {holder} (queue busy holder)" in done.stderr
    with sessions() as session:
        after = session.execute(select(Run.id).order_by(Run.id.desc()).limit(1)).scalar()
        events = session.execute(select(Event).where(Event.run_id == holder)).scalars().all()
    assert after == before
    assert all(e.kind != "cancel_requested" for e in events)
    wait_for("the holder to end", lambda: _ended(sessions, holder), 300)
    assert _run(sessions, holder).status == "completed"


def test_bad_input_queues_nothing(ceph_cluster, sessions, queue_app):
    with sessions() as session:
        before = session.execute(select(Run.id).order_by(Run.id.desc()).limit(1)).scalar()
    with pytest.raises(Exception, match="unknown cluster 'atlantis'"):
        run_queue.enqueue(sessions, queue_app, short_experiment("nowhere", [pause(1)]),
                          cluster="atlantis")
    with pytest.raises(Exception, match="rate"):
        run_queue.enqueue(sessions, queue_app, short_experiment("bad load", [pause(1)]),
                          cluster="lab-ceph", workload={"rate": -5})
    with sessions() as session:
        after = session.execute(select(Run.id).order_by(Run.id.desc()).limit(1)).scalar()
    assert after == before
    with queue_app.open():
        assert queue_app.job_manager.list_jobs(status="todo") == []
