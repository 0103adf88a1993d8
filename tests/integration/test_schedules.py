"""Schedules on a real PostgreSQL server: checked when made, each due slot queued once,
even by ticks that race, and by two real workers."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from catalogue import wait_for
from short_runs import pause
from sqlalchemy import select, update

from service.jobs import run_queue
from service.schedules import services as schedules
from service.schedules.slots import ScheduleError
from service.store.models import Run, Schedule, ScheduleSlot

REPO = Path(__file__).resolve().parents[2]
KILL_OSD = str(REPO / "experiments" / "ceph-kill-osd.json")

pytestmark = pytest.mark.lab


def _short_experiment(tmp_path: Path) -> str:
    """A few seconds of light load and nothing else, so a queued slot finishes quickly."""
    document = json.loads(Path(KILL_OSD).read_text())
    document["title"] = "scheduled hold"
    arguments = document["controls"][0]["provider"]["arguments"]
    arguments["workload"].update(rate=10, ramp_s=1, baseline_s=2, objects_per_container=10)
    arguments.update(tail_s=1, fault=None, restore=None)
    document.pop("steady-state-hypothesis")
    document["method"] = [pause(2)]
    document["rollbacks"] = []
    path = tmp_path / "scheduled-hold.json"
    path.write_text(json.dumps(document))
    return str(path)


def _make(sessions, name: str, experiment: str, cron: str = "* * * * *") -> int:
    return schedules.create(sessions, name=name, cron=cron, timezone="Europe/Berlin",
                            experiment=experiment, clusters=["lab-ceph"], created_by="test")


def _rewind(sessions, schedule_id: int, minutes: float) -> None:
    """As if the schedule had last been looked at some minutes ago."""
    with sessions.begin() as session:
        session.execute(update(Schedule).where(Schedule.id == schedule_id).values(
            checked_until=datetime.now(UTC) - timedelta(minutes=minutes)))


def _disable_all(sessions) -> None:
    with sessions.begin() as session:
        session.execute(update(Schedule).values(enabled=False))


def _runs_of(sessions, schedule_id: int) -> list[Run]:
    with sessions() as session:
        return list(session.execute(select(Run).where(Run.schedule_id == schedule_id)
                                    .order_by(Run.id)).scalars())


@pytest.mark.parametrize(("changes", "message"), [
    ({"cron": "61 * * * *"}, "invalid cron expression '61 * * * *'"),
    ({"timezone": "Mars/Olympus"}, "unknown time zone 'Mars/Olympus'"),
    ({"clusters": ["atlantis"]}, "unknown cluster 'atlantis'"),
    ({"clusters": []}, "a scheduled experiment needs at least one cluster"),
    ({"suite": "experiments/suites/kill-process.json"},
     "a schedule runs either an experiment or a suite (give one)"),
    ({"experiment": "experiments/nope.json"}, "experiment file experiments/nope.json does not"),
])
def test_a_bad_schedule_is_refused_with_its_reason_and_nothing_is_stored(
        ceph_cluster, sessions, changes, message):
    arguments = dict(name="refused", cron="0 2 * * *", timezone="UTC", experiment=KILL_OSD,
                     clusters=["lab-ceph"]) | changes
    with sessions() as session:
        before = session.execute(select(Schedule.id)).scalars().all()
    with pytest.raises(Exception) as raised:
        schedules.create(sessions, **arguments)
    assert message in str(raised.value)
    with sessions() as session:
        assert session.execute(select(Schedule.id)).scalars().all() == before


def test_a_second_schedule_of_the_same_name_is_refused(ceph_cluster, sessions):
    _make(sessions, "twice", KILL_OSD, cron="0 2 * * *")
    with pytest.raises(ScheduleError, match="a schedule named 'twice' exists already"):
        _make(sessions, "twice", KILL_OSD, cron="0 3 * * *")


def test_racing_ticks_queue_a_due_slot_once(ceph_cluster, sessions):
    _disable_all(sessions)
    schedule_id = _make(sessions, "racing ticks", KILL_OSD)
    _rewind(sessions, schedule_id, 1.5)
    results: list[list] = []
    start = threading.Barrier(4)

    def tick():
        start.wait()
        results.append(schedules.claim_due(sessions))

    threads = [threading.Thread(target=tick) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    queued = [pair for result in results for pair in result]
    runs = _runs_of(sessions, schedule_id)
    assert len(queued) == len(runs) == 1  # one due minute (catch-up keeps the latest only)
    assert runs[0].status == "queued" and runs[0].requested_by == "schedule racing ticks"
    with sessions() as session:
        slots = session.execute(select(ScheduleSlot).where(
            ScheduleSlot.schedule_id == schedule_id)).scalars().all()
    assert [s.run_ids for s in slots] == [[runs[0].id]]
    assert schedules.claim_due(sessions) == []  # nothing new is due this minute
    with sessions.begin() as session:  # never run it: this test has no worker
        session.execute(update(Run).where(Run.id == runs[0].id).values(status="cancelled"))
        session.execute(update(Schedule).where(Schedule.id == schedule_id)
                        .values(enabled=False))


def test_two_workers_queue_and_run_a_due_schedule_once(ceph_cluster, sessions, env, tmp_path,
                                                       queue_app):
    _disable_all(sessions)
    schedule_id = _make(sessions, "two workers", _short_experiment(tmp_path))
    _rewind(sessions, schedule_id, 1.5)  # the last minute's slot is due at the first tick
    workers = [subprocess.Popen([sys.executable, "-m", "service", "worker"], env=env, cwd=REPO,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
               for _ in range(2)]
    try:
        # the periodic tick comes within 10 s; the run is short
        wait_for("a scheduled run to finish",
                 lambda: any(r.status == "completed" for r in _runs_of(sessions, schedule_id)),
                 180, every_s=2)
    finally:
        schedules.change(sessions, schedule_id, enabled=False)
        # a minute boundary passed meanwhile may have queued a second run: cancel it, so
        # that no later test's worker picks it up
        for run in _runs_of(sessions, schedule_id):
            if run.status in ("queued", "running") and run.job_id is not None:
                try:
                    run_queue.cancel(sessions, queue_app, run.id)
                except run_queue.QueueError:
                    pass  # it ended meanwhile
        for w in workers:
            w.send_signal(signal.SIGINT)  # graceful: a worker lets its run end
        for w in workers:
            w.wait(timeout=120)
    runs = _runs_of(sessions, schedule_id)
    with sessions() as session:
        slots = session.execute(select(ScheduleSlot).where(
            ScheduleSlot.schedule_id == schedule_id)).scalars().all()
    # then a second slot, but never two runs a slot
    assert len(runs) == len(slots) >= 1
    assert sorted(r.id for r in runs) == sorted(i for s in slots for i in s.run_ids)
    completed = [r for r in runs if r.status == "completed"]
    assert completed and all(r.status in ("completed", "cancelled") for r in runs), \
        [(r.id, r.status, r.error) for r in runs]
    assert completed[0].verdict["status"] == "insufficient_history"
