"""Regression detection on a real series: three nightly-style runs of a short OSD kill on
the Ceph lab, then a fourth with recovery deliberately held back, which must be flagged."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from clusters.ceph.admin import CephAdmin
from service.experiments import documents
from service.jobs import run_queue
from service.results.regression import RegressionPolicy
from service.schedules import services as schedules
from service.schedules import verdicts
from service.store.models import Run

REPO = Path(__file__).resolve().parents[2]
SLOW_RECOVERY_S = 30  # osd_recovery_delay_start: every recovery waits this long to begin
# three earlier nights can reach a rank test's p of 1/4 at most: judged at 25% per figure, as
# an operator could choose for a short series (the default, 5%, needs 19 earlier nights)
POLICY = RegressionPolicy(window=10, alpha=0.25)

# make test-full only: four real runs; the rule itself is tests/unit/test_regression.py's
pytestmark = [pytest.mark.lab, pytest.mark.full]


def _nightly_experiment(tmp_path: Path) -> str:
    """ceph-kill-osd, shortened: light load, the OSD dead for 15 s, then back and clean."""
    document = documents.load(REPO / "experiments" / "ceph-kill-osd.json")
    arguments = documents.faultline_control(document)["provider"]["arguments"]
    arguments["workload"].update(rate=20, ramp_s=1, baseline_s=5)
    arguments["tail_s"] = 2
    kill, _, start, healthy = document["method"]
    kill["provider"]["arguments"]["osd_id"] = 3
    kill["pauses"] = {"after": 15}
    start["provider"]["arguments"]["osd_id"] = 3
    document["method"] = [kill, start, healthy]
    document["title"] = "nightly short OSD kill"
    path = tmp_path / "nightly.json"
    path.write_text(json.dumps(document))
    return str(path)


def _night(sessions, schedule_id: int, experiment: str, env: dict) -> dict:
    """One night of the series: queue the run as a slot would, run it as a worker would."""
    with sessions.begin() as session:
        run_id = run_queue.queued_run(session, documents.load(experiment), cluster="lab-ceph",
                                      experiment_path=experiment, schedule_id=schedule_id,
                                      requested_by="test night").id
    done = subprocess.run([sys.executable, "-m", "service.runs.runner", str(run_id)], env=env,
                          cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    verdict = verdicts.judge_run(sessions, run_id, POLICY)
    with sessions() as session:
        run = session.get(Run, run_id)
        assert run.verdict == verdict
        return {"figures": run.figures, "verdict": verdict}


def test_a_night_with_held_back_recovery_is_flagged_as_a_regression(
        ceph_cluster, sessions, env, tmp_path):
    experiment = _nightly_experiment(tmp_path)
    schedule_id = schedules.create(sessions, name="regression series", cron="0 3 1 1 *",
                                   experiment=experiment, clusters=["lab-ceph"])
    nights = [_night(sessions, schedule_id, experiment, env) for _ in range(3)]
    # a figure is judged once three earlier nights measured it
    assert [n["verdict"]["status"] for n in nights] == ["insufficient_history"] * 3, nights
    with CephAdmin.for_cluster(ceph_cluster) as admin:
        admin.command("config set", who="osd", name="osd_recovery_delay_start",
                      value=str(SLOW_RECOVERY_S))
        try:
            worse = _night(sessions, schedule_id, experiment, env)
        finally:
            admin.command("config rm", who="osd", name="osd_recovery_delay_start")
    assert worse["verdict"]["status"] == "regression", worse
    findings = {f["figure"]: f for f in worse["verdict"]["findings"]}
    after = findings["time_to_full_redundancy_after_restore_s"]
    assert after["value"] > after["limit"]
    assert "is worse than the last 3 runs" in after["reason"]
    assert worse["figures"]["lost_objects"] == 0
