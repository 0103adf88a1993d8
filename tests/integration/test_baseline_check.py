"""A baseline that does not hold, on the real Ceph lab: an OSD frozen (SIGSTOP) for a few
seconds during the baseline window stalls the clients, as a sick disk or a saturated
cluster would. The run judges its baseline before its fault, injects nothing, touches no
daemon, writes nothing in the fault ledger, and ends `invalid` saying why in plain words.

The OSD is resumed before its heartbeat grace (6 s in the lab), so the cluster never marks
it down and the next test finds it as it was."""

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

from clusters import services
from service.store.models import Event, Run

pytestmark = pytest.mark.lab

KILL = {"type": "action", "name": "kill-osd", "provider": {
    "type": "python", "module": "actions.ceph", "func": "kill_osd", "arguments": {"osd_id": 1}}}
START = {"type": "action", "name": "start-osd", "provider": {
    "type": "python", "module": "actions.ceph", "func": "start_osd",
    "arguments": {"osd_id": 1}}}
BASELINE_S = 8
FROZEN_S = 4  # under the lab's 6 s heartbeat grace


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
        # freeze it in the second half of the window (ramp 1 s, then BASELINE_S)
        time.sleep(max(0.0, started + 1 + BASELINE_S / 2 - time.time()))
        os.kill(pid, signal.SIGSTOP)
        try:
            time.sleep(FROZEN_S)
        finally:
            os.kill(pid, signal.SIGCONT)
        out, err = process.communicate(timeout=300)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()

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
        assert (measured["achieved_rate"] < 49 or measured["second_half_ms"][1]
                > 4 * measured["first_half_ms"][1]), measured
        assert run.figures["reasons"]["time_to_detect_s"] == (
            "no fault was injected: the baseline did not hold")
        kinds = set(session.execute(select(Event.kind).where(Event.run_id == run.id)).scalars())
        assert "baseline_judged" in kinds
        assert not kinds & {"fault_started", "fault_injected"}
    assert "baseline check               DID NOT HOLD, nothing injected" in out
