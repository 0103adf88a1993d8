"""A baseline that cannot hold, on the real Swift lab: the run judges it before its fault,
injects nothing, touches no daemon, writes nothing in the fault ledger, and ends `invalid`
saying why in plain words."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from short_runs import short_experiment
from sqlalchemy import func, select

from clusters import services
from service.store.models import Event, FaultRecord, Run

pytestmark = pytest.mark.lab

KILL = {"type": "action", "name": "kill-object-server", "provider": {
    "type": "python", "module": "actions.swift", "func": "kill_server",
    "arguments": {"server": "object", "node": "node1"}}}
START = {"type": "action", "name": "start-object-server", "provider": {
    "type": "python", "module": "actions.swift", "func": "start_server",
    "arguments": {"server": "object", "node": "node1"}}}


def test_a_rate_far_above_capacity_ends_invalid_with_nothing_injected(
        swift_cluster, env, sessions, tmp_path):
    # the Swift lab serves 90-300 ops/s of this mix on 2 cores (bench/README.md)
    experiment = short_experiment("far above capacity", [KILL], [START], rate=2000,
                                  baseline_s=4, fault="kill-object-server",
                                  restore="start-object-server")
    path = tmp_path / "overload.json"
    path.write_text(json.dumps(experiment))
    server = swift_cluster.service("object-server.node1")
    pid_before = services.pid_of(swift_cluster, server)

    done = subprocess.run([sys.executable, "-m", "service", "run", str(path),
                           "--cluster", "lab-swift"], env=env, capture_output=True,
                          text=True, timeout=600)

    assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-2000:]
    assert services.pid_of(swift_cluster, server) == pid_before  # never touched
    with sessions() as session:
        run = session.execute(select(Run).order_by(Run.id.desc()).limit(1)).scalar_one()
        assert run.status == "invalid", (run.status, run.error)
        assert run.error.startswith("the baseline did not hold, nothing was injected: ")
        assert "could not sustain 2000 ops/s" in run.error or "late" in run.error, run.error
        assert run.fault_ts is None
        verdict = run.figures["validity"]
        assert verdict["valid"] is False and verdict["on_invalid"] == "stop"
        assert verdict["measured"]["achieved_rate"] < 1960
        assert run.figures["reasons"]["time_to_detect_s"] == (
            "no fault was injected: the baseline did not hold")
        kinds = set(session.execute(select(Event.kind).where(Event.run_id == run.id)).scalars())
        assert "baseline_judged" in kinds and "fault_injected" not in kinds
        assert session.execute(select(func.count()).select_from(FaultRecord)
                               .where(FaultRecord.run_id == run.id)).scalar() == 0
    assert "baseline check               DID NOT HOLD, nothing injected" in done.stdout
