"""A fault that is not restored is reported loudly, fails the run, and shows in `lab status`."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from sqlalchemy import create_engine, select
from sqlalchemy.orm import Session

from actions.ceph import start_osd
from lab import ceph as ceph_lab
from probes.ceph import wait_for_health_ok
from service.store.models import Run

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.lab


def _kill_without_restore() -> dict:
    experiment = json.loads((REPO / "experiments" / "ceph-kill-osd.json").read_text())
    control = experiment["controls"][0]["provider"]["arguments"]
    control["workload"].update(ramp_s=2, baseline_s=6, objects_per_container=20)
    control["tail_s"] = 2
    control["restore"] = None  # the plan refuses a restore that names no activity
    experiment["method"] = experiment["method"][:1]  # kill, and nothing brings it back
    experiment["rollbacks"] = []
    del experiment["steady-state-hypothesis"]
    return experiment


def test_unrestored_osd_kill_fails_the_run_and_stays_visible(ceph_cluster, database_url, env,
                                                              tmp_path):
    path = tmp_path / "kill-only.json"
    path.write_text(json.dumps(_kill_without_restore()))
    try:
        done = subprocess.run(["faultline", "run", str(path)], env=env, capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 1
        assert "FAULT NOT RESTORED: still down at the end of the run" in done.stderr
        assert "3/4 OSDs up" in done.stderr
        with Session(create_engine(database_url)) as session:
            run = session.execute(select(Run).order_by(Run.id.desc()).limit(1)).scalar_one()
        assert run.status == "failed"
        assert run.error.startswith("FAULT NOT RESTORED")
        status = ceph_lab.status()
        assert status["daemons"]["osd.1"]["alive"] is False
        assert status["health"]["num_up_osds"] == 3
        # the fault is still in the run's ledger, and `faultline heal` undoes it
        healed = subprocess.run(["faultline", "heal", "--cluster", "lab-ceph"], env=env,
                                capture_output=True, text=True, timeout=300)
        assert healed.returncode == 0, healed.stdout + healed.stderr
        assert "restored: osd.1 killed (SIGKILL) on node2" in healed.stdout
    finally:
        start_osd(osd_id=-1)
        wait_for_health_ok(timeout_s=240, require_all_up=True)
