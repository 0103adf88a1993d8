"""A baseline that does not hold, on the real Ceph lab: an OSD frozen (SIGSTOP) again and
again during the baseline window stalls the clients, as a sick disk or a saturated cluster
would. A baseline that is not steady is measured on, up to twice its length (a transient
passes); the freezes go on through every window the run judges, so it stays unsteady: each
window holds operations that waited seconds for the OSD, however late the run gets to judge
it (on a busy machine the judgement came after the last thaw, when the stalled operations
had completed in a burst and the achieved rate was whole again). The
run judges its baseline before its fault, injects nothing, touches no daemon, writes nothing
in the fault ledger, and ends `invalid` saying why in plain words and how long it measured.

The OSD is resumed before its heartbeat grace (6 s in the lab) each time, so the cluster
never marks it down. Its peers still saw pings seconds late, which Ceph reports as a health
warning (OSD_SLOW_PING_TIME_*) for a while after: the test waits until it has cleared, so
the next test finds the cluster as this one found it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from short_runs import short_experiment
from sqlalchemy import select

from clusters.access import services
from clusters.ceph.admin import CephAdmin
from service.results.baseline import EXPECTED_CHECKS
from service.store.models import Event, Run

pytestmark = pytest.mark.lab

KILL = {"type": "action", "name": "kill-osd", "provider": {
    "type": "python", "module": "actions.ceph", "func": "kill_osd", "arguments": {"osd_id": 1}}}
START = {"type": "action", "name": "start-osd", "provider": {
    "type": "python", "module": "actions.ceph", "func": "start_osd",
    "arguments": {"osd_id": 1}}}
BASELINE_S = 8
# seconds from the baseline's start, each under the lab's 6 s heartbeat grace: the window is
# judged at 8 s, then (slid on by half of it) at 12 and 16 s, and each one holds seconds in
# which operations on the OSD waited longer than 1 s
FREEZES = ((4.0, 8.5), (9.5, 14.0), (14.8, 17.3))


def _load_started(sessions, process: subprocess.Popen, timeout_s: float = 120) -> float:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and process.poll() is None:
        with sessions() as session:
            started = session.execute(select(Run.load_started_ts).where(
                Run.title == "frozen osd").order_by(Run.id.desc()).limit(1)).scalar()
        if started:
            return started
        time.sleep(0.2)
    raise AssertionError("the run's load never started")


def _wait_until_no_warning(cluster, timeout_s: float = 420) -> None:
    with CephAdmin.for_cluster(cluster) as admin:
        last, ok = admin.wait_until(
            lambda s: (s.num_pgs > 0 and s.clean_pgs == s.num_pgs and not s.degraded_objects
                       and set(s.checks) <= EXPECTED_CHECKS), timeout_s, hold_s=3)
    assert ok is not None, f"still unhealthy {timeout_s:.0f} s after the freezes: {last}"


def test_an_osd_frozen_during_the_baseline_ends_the_run_invalid_with_nothing_injected(
        ceph_cluster, env, sessions, tmp_path):
    experiment = short_experiment("frozen osd", [KILL], [START], rate=50,
                                  baseline_s=BASELINE_S, fault="kill-osd", restore="start-osd")
    path = tmp_path / "frozen.json"
    path.write_text(json.dumps(experiment))
    osd = ceph_cluster.service("osd.1")
    pid = services.pid_of(ceph_cluster, osd)

    process = subprocess.Popen([sys.executable, "-m", "service", "run", str(path)], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        started = _load_started(sessions, process)
        baseline_start = started + 1  # after the 1 s ramp
        for frozen, thawed in FREEZES:
            time.sleep(max(0.0, baseline_start + frozen - time.time()))
            os.kill(pid, signal.SIGSTOP)
            try:
                time.sleep(max(0.0, baseline_start + thawed - time.time()))
            finally:
                os.kill(pid, signal.SIGCONT)
        out, err = process.communicate(timeout=300)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        _wait_until_no_warning(ceph_cluster)

    assert process.returncode == 1, out[-2000:] + err[-2000:]
    assert services.pid_of(ceph_cluster, osd) == pid  # never killed, never restarted
    with sessions() as session:
        run = session.execute(select(Run).where(Run.title == "frozen osd")
                              .order_by(Run.id.desc()).limit(1)).scalar_one()
        assert run.status == "invalid", (run.status, run.error)
        assert run.error.startswith("the baseline did not hold, nothing was injected: ")
        assert run.fault_ts is None
        verdict = run.figures["validity"]
        assert verdict["valid"] is False and verdict["on_invalid"] == "stop"
        measured = verdict["measured"]
        assert measured["slow_ops"] > 0.01 * measured["ops"], measured
        assert any(r.startswith("the cluster stalled: ") for r in verdict["reasons"])
        assert verdict["baseline_s"] == BASELINE_S
        assert verdict["measured_s"] == 2 * BASELINE_S
        assert [e["after_s"] for e in verdict["extensions"]] == [8, 12]
        assert run.figures["reasons"]["time_to_detect_s"] == (
            "no fault was injected: the baseline did not hold")
        kinds = set(session.execute(select(Event.kind).where(Event.run_id == run.id)).scalars())
        assert "baseline_judged" in kinds and "baseline_extended" in kinds
        assert not kinds & {"fault_started", "fault_injected"}
    assert "baseline check               DID NOT HOLD, nothing injected" in out
