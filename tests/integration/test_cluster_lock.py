"""The cluster lock on a real PostgreSQL server: one holder per cluster, across processes,
and a holder that dies lets it go."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from service.jobs.cluster_lock import ClusterBusy, ClusterLock
from service.store.recording import RunRecorder

HOLD_IN_CHILD = """
import sys, time
from service.store import db
from service.jobs.cluster_lock import ClusterLock
lock = ClusterLock(sys.argv[1], sys.argv[2]).acquire(db.session_factory(sys.argv[1]))
print("held", flush=True)
time.sleep(600)
"""


def test_a_second_lock_on_a_busy_cluster_names_the_run_that_holds_it(database_url, sessions):
    run = RunRecorder.create(sessions, title="lock holder", cluster="lock-a",
                             cluster_kind="ceph", workload={})
    held = ClusterLock(database_url, "lock-a").acquire(sessions)
    try:
        with pytest.raises(ClusterBusy, match=rf"cluster lock-a is busy: run {run.run_id} "
                                              r"\(lock holder\) is running on it since"):
            ClusterLock(database_url, "lock-a").acquire(sessions)
        ClusterLock(database_url, "lock-b").acquire(sessions).release()  # others are free
    finally:
        held.release()
        run.finish("completed")
    ClusterLock(database_url, "lock-a").acquire(sessions).release()


def test_a_waiting_lock_gets_the_cluster_when_the_holder_lets_go(database_url, sessions):
    held = ClusterLock(database_url, "lock-c").acquire(sessions)
    started = time.monotonic()
    with pytest.raises(ClusterBusy):
        ClusterLock(database_url, "lock-c").acquire(sessions, wait_s=1.0, poll_s=0.2)
    assert time.monotonic() - started >= 1.0
    held.release()
    ClusterLock(database_url, "lock-c").acquire(sessions, wait_s=1.0, poll_s=0.2).release()


def test_a_holder_killed_by_sigkill_frees_the_cluster(database_url, sessions):
    child = subprocess.Popen([sys.executable, "-c", HOLD_IN_CHILD, database_url, "lock-d"],
                             stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "held"
        with pytest.raises(ClusterBusy):
            ClusterLock(database_url, "lock-d").acquire(sessions)
    finally:
        child.kill()
        child.wait()
    # the server ends the dead process's session, and its lock with it
    ClusterLock(database_url, "lock-d").acquire(sessions, wait_s=10, poll_s=0.2).release()
