"""Issue 25's "Orphaned faults stay", played on the real Ceph lab with real `faultline worker`
processes: a queued kill-osd run's process is SIGKILLed while its OSD is down, and a worker
started afterwards restores the OSD by itself (and says so on the run), unless it runs with
--no-auto-heal."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from catalogue import wait_for
from short_runs import pause, short_experiment
from sqlalchemy import select

from clusters.ceph.admin import CephAdmin
from service.jobs import run_queue
from service.jobs.app import make_app
from service.runs import heal
from service.store import db
from service.store.fault_ledger import PgFaultLedger
from service.store.models import Event, Run

REPO = Path(__file__).resolve().parents[2]
OSD = 1  # the issue's

pytestmark = pytest.mark.lab

KILL_OSD = {"type": "action", "name": "kill-osd", "provider": {
    "type": "python", "module": "actions.ceph", "func": "kill_osd", "arguments": {"osd_id": OSD}}}
START_OSD = {"type": "action", "name": "start-osd", "provider": {
    "type": "python", "module": "actions.ceph", "func": "start_osd",
    "arguments": {"osd_id": OSD}}}


class Workers:
    """Real `faultline worker` processes on the test database, each stopped by its PID
    (SIGINT: graceful), SIGKILLed if it does not stop within a minute."""

    def __init__(self, env: dict[str, str], logs: Path) -> None:
        self.env, self.logs, self.started = env, logs, []

    def start(self, *options: str) -> tuple[subprocess.Popen, Path]:
        log = self.logs / f"worker-{len(self.started)}.log"
        with log.open("w") as out:
            process = subprocess.Popen([sys.executable, "-m", "service", "worker",
                                        "--concurrency", "1", *options], env=self.env,
                                       cwd=REPO, stdout=out, stderr=subprocess.STDOUT)
        self.started.append(process)
        return process, log

    def stop(self, process: subprocess.Popen) -> None:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(60)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def stop_all(self) -> None:
        for process in self.started:
            self.stop(process)


def osd_up(cluster) -> bool:
    with CephAdmin.for_cluster(cluster) as admin:
        return admin.osd_up(OSD)


def run_of(sessions, run_id: int) -> Run:
    with sessions() as session:
        return session.get(Run, run_id)


def faults_of(sessions, run_id: int) -> list[str]:
    return [e.key for e in PgFaultLedger(sessions).outstanding("lab-ceph") if e.run_id == run_id]


def heal_events(sessions, run_id: int) -> list[Event]:
    with sessions() as session:
        return list(session.execute(select(Event).where(
            Event.run_id == run_id, Event.kind.in_(("healed", "heal_failed")))).scalars())


def started(log: Path, process: subprocess.Popen) -> bool:
    assert process.poll() is None, f"the worker exited {process.returncode}: {log.read_text()}"
    return "Starting worker on" in log.read_text()


@pytest.fixture(scope="module")
def orphan(database_url, ceph_cluster, tmp_path_factory) -> int:
    """One orphan for the module (a kill run costs a minute or two): a kill-osd run from the
    queue whose process was SIGKILLed while osd.1 was down; the worker that ran it (with no
    auto-heal) closed it as interrupted and was stopped. Its run id. Afterwards, whatever
    is left is healed and osd.1 is up again."""
    sessions = db.session_factory(database_url)
    workers = Workers({**os.environ, "DATABASE_URL": database_url,
                       "PATH": f"{REPO / '.venv' / 'bin'}:{os.environ['PATH']}"},
                      tmp_path_factory.mktemp("orphan"))
    try:
        worker, _ = workers.start("--no-auto-heal")
        run_id = run_queue.enqueue(sessions, make_app(database_url), short_experiment(
            "orphaned kill", [KILL_OSD, pause(600)], rollbacks=[START_OSD],
            restore="start-osd"), cluster="lab-ceph", requested_by="test")
        wait_for(f"osd.{OSD} down with its ledger entry",
                 lambda: faults_of(sessions, run_id) == [f"daemon:osd.{OSD}"]
                 and not osd_up(ceph_cluster), 240, every_s=1)
        # SIGKILL the run's process, by the PID its run recorded, as the OOM killer would
        os.kill(run_of(sessions, run_id).owner_pid, signal.SIGKILL)
        wait_for("the run to be closed",
                 lambda: run_of(sessions, run_id).status == "interrupted", 60)
        workers.stop(worker)
        assert faults_of(sessions, run_id) == [f"daemon:osd.{OSD}"]  # the orphan
        yield run_id
    finally:
        workers.stop_all()
        for result in heal.heal_everywhere(sessions, "lab-ceph"):
            print(heal.format_result(result))
        wait_for(f"osd.{OSD} up again", lambda: osd_up(ceph_cluster), 120)


@pytest.fixture
def workers(env, tmp_path):
    started = Workers(env, tmp_path)
    yield started
    started.stop_all()


# the first test leaves the orphan as it found it, for the second


def test_a_worker_with_no_auto_heal_leaves_the_orphan_in_the_ledger(
        orphan, sessions, workers, ceph_cluster):
    """Exploit "Orphaned faults stay", with auto-heal turned off: the operator asked for it."""
    worker, log = workers.start("--no-auto-heal")
    wait_for("the worker to start", lambda: started(log, worker), 60)
    time.sleep(5)  # an auto-heal's first pass would have restored it by now

    assert "auto-heal off" in log.read_text()
    assert faults_of(sessions, orphan) == [f"daemon:osd.{OSD}"]
    assert not osd_up(ceph_cluster)
    assert heal_events(sessions, orphan) == []


def test_a_worker_restores_the_osd_a_killed_run_left_down_within_60_s_of_its_start(
        orphan, sessions, workers, ceph_cluster, invoke):
    """Exploit "Orphaned faults stay": the runner of a queued run SIGKILLed while its OSD is
    down, a worker started again, osd.1 still down 11 minutes later."""
    begun = time.monotonic()
    worker, log = workers.start()
    up_after = wait_for(f"osd.{OSD} up again", lambda: osd_up(ceph_cluster), 60)
    print(f"\nworker start to osd.{OSD} up in the osdmap: {up_after} s")
    wait_for("the ledger entry struck off", lambda: faults_of(sessions, orphan) == [],
             max(1.0, 60 - (time.monotonic() - begun)))
    wait_for("the heal on the run", lambda: heal_events(sessions, orphan) != [],
             max(1.0, 60 - (time.monotonic() - begun)))

    assert run_of(sessions, orphan).status == "interrupted"
    [event] = heal_events(sessions, orphan)
    assert (event.kind, event.detail["key"], event.detail["by"]) == (
        "healed", f"daemon:osd.{OSD}", "worker auto-heal")
    assert event.detail["worker"].endswith(f"-{worker.pid}")
    report = invoke("report", str(orphan))
    assert report.exit_code == 0, report.output
    assert f"healed: osd.{OSD} " in report.stdout
    assert "restored by worker auto-heal" in report.stdout
    wait_for("the worker's log to say it", lambda: "auto-heal: restored: osd." in
             log.read_text(), 10)
