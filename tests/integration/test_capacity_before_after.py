"""A run that measures the capacity before and after an activity (the control's `capacity`,
what a scale experiment uses): a real calibration before the load starts, the steady load
ended at the named activity, a second calibration, both stored with the run and said in the
report. No scale action here (the pause stands for it): the mechanism alone, on lab-ceph."""

from __future__ import annotations

import json
import subprocess

import pytest
from short_runs import pause, short_experiment
from sqlalchemy import select
from sqlalchemy.orm import selectinload

from service.store.models import Calibration, Run

QUICK = {"stage_s": 3, "warmup_s": 1, "max_in_flight": 4}  # a calibration in about 15 s


@pytest.mark.lab
@pytest.mark.full  # two calibrations: ~50 s; the scale experiments use it in every run
def test_capacity_is_measured_before_the_load_and_after_the_named_activity(
        ceph_cluster, env, sessions, tmp_path, made):
    hold = {**pause(1), "name": "scaled"}
    experiment = short_experiment("capacity before and after", [hold, pause(2)],
                                  capacity={"after": "scaled", **QUICK})
    path = tmp_path / "capacity.json"
    path.write_text(json.dumps(experiment))

    done = subprocess.run(["faultline", "run", str(path)], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=600)
    with sessions() as session:
        run = session.execute(select(Run).options(selectinload(Run.events))
                              .order_by(Run.id.desc()).limit(1)).scalar_one()
        made.append(run.id)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        capacity = run.figures["capacity"]
        kinds = [e.kind for e in sorted(run.events, key=lambda e: e.ts)]
        calibrations = [session.get(Calibration, capacity[w]["calibration_id"])
                        for w in ("before", "after")]
    # before the load started, after the named activity, where the load ended
    assert kinds.index("capacity_measured") < kinds.index("load_started")
    assert kinds.index("load_ended") < len(kinds) - 1 - kinds[::-1].index("capacity_measured")
    for which, row in zip(("before", "after"), calibrations, strict=True):
        assert row.status == "completed" and row.settings["max_in_flight"] == 4
        assert capacity[which]["capacity_ops"] == row.capacity_ops
        assert capacity[which]["valid"] == (not row.generator_bound), capacity[which]
    if capacity["change"] is not None:
        expected = round(calibrations[1].capacity_ops / calibrations[0].capacity_ops - 1, 4)
        assert capacity["change"] == expected
    else:  # only a generator-bound knee keeps the change from being given
        assert "load generator was the bottleneck" in capacity["reason"]
    report = subprocess.run(["faultline", "report", str(run.id)], env=env, capture_output=True,
                            text=True, timeout=60).stdout
    assert f"scale: capacity {capacity['before']['capacity_ops']:g} -> " in report \
        or "scale: capacity at least" in report, report
    assert f"before: calibration {calibrations[0].id}" in report
