"""`faultline run --trials 3` on the Ceph lab: three runs stored as one group, healthy between
them; two groups at different rates compared, each figure with its spread, and the outcome
figures judged by the stated method (docs/statistics.md), the offered rate never."""

from __future__ import annotations

import json
import subprocess

import pytest
from short_runs import pause, short_experiment
from sqlalchemy import select

from service.store.models import Run

pytestmark = pytest.mark.lab


def _trials(env, tmp_path, name: str, rate: float) -> tuple[subprocess.CompletedProcess, list]:
    path = tmp_path / f"trials-{rate:g}.json"
    path.write_text(json.dumps(short_experiment(name, [pause(1)], rate=rate)))
    done = subprocess.run(["faultline", "run", str(path), "--trials", "3"], env=env,
                          cwd=tmp_path, capture_output=True, text=True, timeout=900)
    return done, [line for line in done.stdout.splitlines() if line.startswith("  trial ")]


def test_three_trials_are_one_group_and_two_groups_are_judged_by_the_stated_method(
        ceph_cluster, env, sessions, tmp_path):
    slow, slow_lines = _trials(env, tmp_path, "trials at 15 ops/s", 15)
    assert slow.returncode == 0, slow.stdout[-3000:] + slow.stderr[-3000:]
    fast, _ = _trials(env, tmp_path, "trials at 45 ops/s", 45)
    assert fast.returncode == 0, fast.stdout[-3000:] + fast.stderr[-3000:]

    with sessions() as session:
        runs = session.execute(select(Run).where(Run.title.in_(
            ["trials at 15 ops/s", "trials at 45 ops/s"])).order_by(Run.id)).scalars().all()
    groups = {}
    for run in runs:
        # a trial whose baseline did not hold (a lab OSD can flap under the side stream's
        # load) is run again once: its invalid run stays in the group
        assert run.trials == 3 and (run.status == "completed" or (
            run.status == "invalid" and "baseline did not hold" in run.error)), \
            (run.id, run.status, run.error)
        groups.setdefault(run.trial_group, []).append((run.trial_index, run.id, run.status))
    assert len(groups) == 2
    assert all([i for i, _, status in members if status == "completed"] == [1, 2, 3]
               for members in groups.values())
    assert slow_lines == [f"  trial {i}: run {run_id}" + (
        " (its baseline did not hold: run again)" if status == "invalid" else "")
        for i, run_id, status in groups[runs[0].trial_group]]
    # the trials' own summary gives the group's spread
    assert "Trials (median [min to max], the median's 95% interval from 6 trials):" in \
        slow.stdout
    assert "baseline throughput: 15.0 ops/s [" in slow.stdout

    compared = subprocess.run(["faultline", "compare", *[str(r.id) for r in runs], "--json"],
                              env=env, capture_output=True, text=True, timeout=120)
    assert compared.returncode == 0, compared.stderr
    trials = json.loads(compared.stdout)["trials"]
    assert [g["run_ids"] for g in trials["groups"]] == [
        [run_id for _, run_id, _ in members] for members in groups.values()]
    figures = trials["differences"][0]["figures"]
    # the offered rate is an input: shown in each group, never judged
    assert "baseline_ops" not in figures
    assert trials["groups"][0]["figures"]["baseline_ops"]["median"] == pytest.approx(15, rel=0.05)
    # 0 lost on every run, but 3 vs 3 cannot reach 5%: the line says what would
    assert figures["lost_objects"]["verdict"] == "cannot tell", figures["lost_objects"]
    assert "too few trials (3 vs 3)" in figures["lost_objects"]["text"]

    text = subprocess.run(["faultline", "compare", *[str(r.id) for r in runs]], env=env,
                          capture_output=True, text=True, timeout=120).stdout
    assert "The groups compared, figure by figure:" in text
    assert "Method: per outcome figure" in text
    assert "lost objects: cannot tell" in text and "within noise" not in text


def test_trials_that_make_no_sense_are_refused_before_anything_runs(env, sessions, tmp_path):
    path = tmp_path / "never.json"
    path.write_text(json.dumps(short_experiment("never run", [pause(1)])))
    for trials in ("0", "51", "three"):
        done = subprocess.run(["faultline", "run", str(path), "--trials", trials], env=env,
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 2 and "--trials" in done.stderr, done.stderr
    with sessions() as session:
        assert session.execute(select(Run).where(Run.title == "never run")).first() is None

