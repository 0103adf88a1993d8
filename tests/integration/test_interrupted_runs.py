"""A run whose process died is marked interrupted, at its last sample, with the figures of
what it recorded, by whatever looks first; a live run never is (real PostgreSQL, no lab)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from factories import START, make_run, record_load
from sqlalchemy import func, select, update
from web_login import SECRET, log_in

from clusters.processes import ProcessOwner, start_of
from service.runs import launch
from service.runs.reaper import FAULT_NOTE, NO_VERIFY, interrupt_dead_runs
from service.runs.supervisor import settle
from service.store.models import ClusterSample, Event, Run
from service.web.app import create_app

REPO = Path(__file__).resolve().parents[2]
HOST = socket.gethostname()
HINT = "any fault it left is in the fault ledger: `faultline heal`"
LAST_SAMPLE = "last sample at 2023-11-14 22:14:19 UTC"  # START + 59 s, make_run's last second

# A process that opens a run as the control does (RunRecorder.create), says its id, and
# then does nothing until it is killed.
OWNER_SCRIPT = """
import sys, time
from service.store import db
from service.store.recording import RunRecorder
recorder = RunRecorder.create(db.session_factory(), title="killed mid-run", cluster=sys.argv[1],
                              cluster_kind="ceph", workload={"rate": 100, "ramp_s": 0})
print(recorder.run_id, flush=True)
time.sleep(600)
"""


@pytest.fixture
def cluster(own_cluster):
    return own_cluster


@pytest.fixture
def processes():
    """Start processes; each is killed (if still running) and waited for afterwards."""
    started: list[subprocess.Popen] = []

    def start(*argv: str, **kwargs) -> subprocess.Popen:
        process = subprocess.Popen(argv, **kwargs)
        started.append(process)
        return process

    yield start
    for process in started:
        if process.poll() is None:
            process.kill()
        process.wait()


@pytest.fixture
def sleeper(processes) -> subprocess.Popen:
    return processes("sleep", "600")


def killed(process: subprocess.Popen) -> int:
    """SIGKILL it, as a crash or the OOM killer would, and reap it; its pid."""
    process.send_signal(signal.SIGKILL)
    process.wait(10)
    return process.pid


def owned_by(process: subprocess.Popen) -> ProcessOwner:
    return ProcessOwner(process.pid, HOST, start_of(process.pid))


def run_of(sessions, run_id: int) -> Run:
    with sessions() as session:
        return session.get(Run, run_id)


def events_of(sessions, run_id: int, kind: str) -> list[Event]:
    with sessions() as session:
        return list(session.execute(select(Event).where(Event.run_id == run_id,
                                                        Event.kind == kind)).scalars())


def test_a_run_whose_process_was_sigkilled_is_interrupted_at_its_last_sample_with_figures(
        sessions, cluster, processes, database_url):
    owner = processes(sys.executable, "-c", OWNER_SCRIPT, cluster, cwd=REPO,
                      stdout=subprocess.PIPE, text=True,
                      env={**os.environ, "DATABASE_URL": database_url})
    run_id = int(owner.stdout.readline())
    with sessions.begin() as session:  # what it recorded before it died
        run = session.get(Run, run_id)
        assert (run.owner_pid, run.owner_host) == (owner.pid, HOST)
        assert run.owner_start == start_of(owner.pid) and run.owner_seen_at is not None
        record_load(session, run)
        session.add_all(ClusterSample(run_id=run_id, ts=START + s + 0.5, health="HEALTH_WARN",
                                      state={"fault_seen": s >= 32, "fully_redundant": False,
                                             "at_risk": s >= 32})
                        for s in range(31, 50))
    pid = killed(owner)

    [closed] = interrupt_dead_runs(sessions, "a test")

    run = run_of(sessions, run_id)
    assert closed.run_id == run_id and closed.error == run.error
    assert run.status == "interrupted"
    assert run.ended_at == datetime.fromtimestamp(START + 59, UTC)  # the last load sample
    assert run.error == f"its process (pid {pid} on {HOST}) died; {LAST_SAMPLE}; {HINT}"
    assert run.figures["baseline_ops"] == 100
    assert run.figures["throughput_drop"] is not None
    assert run.figures["time_to_detect_s"] == 2.5
    assert run.figures["lost_objects"] is None
    assert run.figures["reasons"]["lost_objects"] == NO_VERIFY
    [event] = events_of(sessions, run_id, "interrupted")
    assert event.ts == START + 59
    assert event.detail["found_by"] == "a test"
    assert event.detail["cause"] == f"its process (pid {pid} on {HOST}) died"
    assert [e.ts for e in events_of(sessions, run_id, "cluster_noticed")] == [START + 32.5]


def test_a_run_without_samples_ends_at_its_start(sessions, cluster, sleeper):
    with sessions() as session:
        run_id = make_run(session, cluster=cluster, status="running", fault=None, seconds=0,
                          owner=owned_by(sleeper)).id
    pid = killed(sleeper)

    interrupt_dead_runs(sessions, "a test")

    run = run_of(sessions, run_id)
    assert (run.status, run.ended_at) == ("interrupted", run.started_at)
    assert run.error == f"its process (pid {pid} on {HOST}) died; no sample was recorded; {HINT}"
    assert run.figures["baseline_ops"] is None


def test_a_run_that_died_before_its_fault_action_reported_counts_the_fault_from_its_start(
        sessions, cluster, sleeper):
    with sessions() as session:  # killed during the pause after its fault's action
        run = make_run(session, cluster=cluster, status="running", fault=None,
                       owner=owned_by(sleeper))
        session.add(Event(run_id=run.id, ts=START + 30, kind="fault_started",
                          detail={"name": "kill-osd"}))
        session.commit()
    killed(sleeper)

    interrupt_dead_runs(sessions, "a test")

    run = run_of(sessions, run.id)
    assert (run.status, run.fault_ts) == ("interrupted", START + 30)
    assert run.figures["errors"] == 0 and run.figures["baseline_ops"] == 100
    [event] = events_of(sessions, run.id, "fault_injected")
    assert (event.ts, event.detail) == (START + 30, {"name": "kill-osd", "note": FAULT_NOTE})


def test_a_run_whose_process_runs_stays_running(sessions, cluster, sleeper):
    with sessions() as session:
        run_id = make_run(session, cluster=cluster, status="running",
                          owner=owned_by(sleeper)).id

    assert [c for c in interrupt_dead_runs(sessions, "a test") if c.run_id == run_id] == []
    assert run_of(sessions, run_id).status == "running"


def test_a_run_whose_pid_now_runs_another_process_is_interrupted(sessions, cluster, sleeper):
    # the pid is the sleeper's, but the owner started one clock tick earlier: not it
    boot, namespace, ticks = start_of(sleeper.pid).split(" ")
    reused = ProcessOwner(sleeper.pid, HOST, f"{boot} {namespace} {int(ticks) - 1}")
    with sessions() as session:
        run_id = make_run(session, cluster=cluster, status="running", owner=reused).id

    interrupt_dead_runs(sessions, "a test")

    run = run_of(sessions, run_id)
    assert run.status == "interrupted"
    assert run.error == (f"its process (pid {sleeper.pid} on {HOST}) died (the pid now belongs "
                         f"to a later process); {LAST_SAMPLE}; {HINT}")


@pytest.mark.parametrize(("silent_min", "status"), [(5, "running"), (11, "interrupted")])
def test_a_run_on_another_host_is_interrupted_after_10_minutes_without_a_heartbeat(
        sessions, cluster, silent_min, status):
    elsewhere = ProcessOwner(4242, "driver-7.example", "boot pid:[1] 99")
    with sessions() as session:
        run_id = make_run(session, cluster=cluster, status="running", owner=elsewhere).id
    with sessions.begin() as session:
        session.execute(update(Run).where(Run.id == run_id).values(
            owner_seen_at=func.now() - timedelta(minutes=silent_min)))

    interrupt_dead_runs(sessions, "a test")

    run = run_of(sessions, run_id)
    assert run.status == status
    if status == "interrupted":
        assert run.error == ("its process (pid 4242 on driver-7.example) gave no sign of life "
                             f"for 11 min; {LAST_SAMPLE}; {HINT}")


def test_a_run_from_before_owners_were_recorded_is_interrupted_once_silent_10_minutes(
        sessions, cluster):
    with sessions() as session:
        run_id = make_run(session, cluster=cluster, status="running").id
    with sessions.begin() as session:  # as migration 0012 leaves a run that was running
        session.execute(update(Run).where(Run.id == run_id).values(
            owner_pid=None, owner_host=None, owner_start=None, owner_seen_at=None,
            started_at=datetime.fromtimestamp(START - 60, UTC)))

    interrupt_dead_runs(sessions, "a test")

    run = run_of(sessions, run_id)
    assert run.status == "interrupted"
    assert run.error.startswith("it gave no sign of life for ")
    assert run.error.endswith(" d (it began before runs recorded their process); "
                              f"{LAST_SAMPLE}; {HINT}")


def test_two_finders_at_once_close_a_run_once(sessions, cluster, sleeper):
    with sessions() as session:
        run_id = make_run(session, cluster=cluster, status="running",
                          owner=owned_by(sleeper)).id
    killed(sleeper)
    barrier, found = threading.Barrier(4), []

    def finder(n: int) -> None:
        barrier.wait()
        found.extend(c.run_id for c in interrupt_dead_runs(sessions, f"finder {n}"))

    threads = [threading.Thread(target=finder, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)

    assert found.count(run_id) == 1
    assert len(events_of(sessions, run_id, "interrupted")) == 1


def test_a_finished_run_is_left_as_it_is(sessions, cluster):
    with sessions() as session:
        run_id = make_run(session, cluster=cluster, status="completed").id

    interrupt_dead_runs(sessions, "a test")

    assert run_of(sessions, run_id).status == "completed"
    assert events_of(sessions, run_id, "interrupted") == []


# --- each caller: the one that finds the dead run first marks it ---

@pytest.fixture
def dead_run(sessions, cluster, sleeper) -> int:
    """A run left running by a process that was SIGKILLed."""
    with sessions() as session:
        run_id = make_run(session, cluster=cluster, status="running",
                          owner=owned_by(sleeper)).id
    killed(sleeper)
    return run_id


def found_by(sessions, run_id: int) -> str | None:
    run = run_of(sessions, run_id)
    assert run.status == "interrupted", (run.status, run.error)
    [event] = events_of(sessions, run_id, "interrupted")
    return event.detail["found_by"]


def test_faultline_runs_lists_a_dead_run_as_interrupted(invoke, sessions, dead_run):
    result = invoke("runs", "--json", "--limit", "500")

    assert result.exit_code == 0, result.output
    [row] = [r for r in json.loads(result.stdout) if r["run_id"] == dead_run]
    assert row["status"] == "interrupted"
    assert f"run {dead_run} interrupted: its process (pid " in result.stderr
    assert found_by(sessions, dead_run) == "faultline runs"


def test_faultline_heal_marks_a_dead_run_interrupted(invoke, sessions, dead_run):
    result = invoke("heal", "--cluster", f"none-{uuid.uuid4().hex[:8]}")

    assert result.exit_code == 0, result.output
    assert result.stdout == "no outstanding fault\n"
    assert found_by(sessions, dead_run) == "faultline heal"


def test_faultline_run_marks_a_dead_run_interrupted_before_it_starts(
        invoke, sessions, dead_run, monkeypatch):
    statuses = []

    def run(path, cluster, inventory):  # ends before a run is recorded
        statuses.append(run_of(sessions, dead_run).status)
        return {"status": "aborted"}

    monkeypatch.setattr(launch, "run", run)

    invoke("run", str(REPO / "experiments" / "ceph-kill-osd.json"), "--cluster",
           f"none-{uuid.uuid4().hex[:8]}")

    assert statuses == ["interrupted"]
    assert found_by(sessions, dead_run) == "faultline run"


def test_a_worker_marks_a_dead_run_interrupted_as_it_starts(sessions, dead_run, env,
                                                            processes, tmp_path):
    # on the load queue, where make test leaves no job: on the runs queue it once took a run
    # another test had queued, and a worker's Ctrl-C waits for its runs (CI, 60 s timeout)
    log = tmp_path / "worker.log"
    with log.open("w") as out:
        worker = processes(sys.executable, "-m", "service", "worker", "--queue", "load",
                           env=env, cwd=REPO, stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while run_of(sessions, dead_run).status == "running":
            assert worker.poll() is None, f"the worker exited {worker.returncode}"
            assert time.monotonic() < deadline, "the run still running 60 s after the worker"
            time.sleep(0.2)
    finally:
        # the run is marked before the queue's worker starts; a Ctrl-C before it has put
        # in its signal handlers was once lost in asyncio's start-up (CI: no exit in 60 s)
        while "Starting worker on" not in log.read_text() and worker.poll() is None \
                and time.monotonic() < deadline + 60:
            time.sleep(0.2)
        time.sleep(1)
        worker.send_signal(signal.SIGINT)
        try:
            worker.wait(60)
        except subprocess.TimeoutExpired:
            raise AssertionError("the worker did not stop within 60 s of a Ctrl-C: "
                                 + log.read_text()[-2000:]) from None
    assert found_by(sessions, dead_run) == "faultline worker"


def test_the_service_marks_a_dead_run_interrupted_as_it_starts(database_url, sessions,
                                                               dead_run):
    create_app({"DATABASE_URL": database_url, "SECRET_KEY": SECRET})

    assert found_by(sessions, dead_run) == "the service, as it started"


@pytest.mark.parametrize(("path", "caller"), [("/", "the dashboard's runs list"),
                                              ("/api/v1/runs", "the API's runs list")])
def test_the_runs_lists_mark_a_dead_run_interrupted(database_url, sessions, make_user,
                                                   cluster, sleeper, path, caller):
    client = create_app({"DATABASE_URL": database_url, "SECRET_KEY": SECRET}).test_client()
    assert log_in(client, *make_user("viewer")).status_code == 302
    with sessions() as session:  # dies after the service started
        run_id = make_run(session, cluster=cluster, status="running",
                          owner=owned_by(sleeper)).id
    killed(sleeper)

    response = client.get(path)

    assert response.status_code == 200
    assert found_by(sessions, run_id) == caller


def test_a_worker_whose_run_process_was_killed_marks_its_run_interrupted(
        database_url, sessions, cluster, sleeper):
    with sessions() as session:
        run_id = make_run(session, cluster=cluster, status="running",
                          owner=owned_by(sleeper)).id
    pid = killed(sleeper)

    assert settle(database_url, run_id, -signal.SIGKILL, False) == "interrupted"
    assert run_of(sessions, run_id).error == (f"its process (pid {pid} on {HOST}) was killed "
                                              f"by SIGKILL; {LAST_SAMPLE}; {HINT}")
    assert found_by(sessions, run_id) == "the worker that ran it"
