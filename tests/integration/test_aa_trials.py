"""An A/A comparison on the real Ceph lab (docs/statistics.md): the same experiment, an OSD
killed and started again under steady load, run as two groups of six trials. Both groups
come from one distribution, so the stated method must find no "different" on any outcome
figure; it may say so by chance in at most 5% of such comparisons (Holm's correction over a
comparison's figures), which is this test's own false-failure rate.

About twelve minutes: only in `make test-full`."""

from __future__ import annotations

import json
import subprocess

import pytest
from short_runs import short_experiment

pytestmark = [pytest.mark.lab, pytest.mark.full]

TRIALS = 6
TAIL_S = 25  # the load goes on until the clients and the cluster have recovered
KILL = {"type": "action", "name": "kill-osd", "pauses": {"after": 4}, "provider": {
    "type": "python", "module": "actions.ceph", "func": "kill_osd", "arguments": {"osd_id": 1}}}
START = {"type": "action", "name": "start-osd", "provider": {
    "type": "python", "module": "actions.ceph", "func": "start_osd",
    "arguments": {"osd_id": 1}}}


def _group(env, tmp_path, title: str) -> list[int]:
    path = tmp_path / f"{title.replace(' ', '-')}.json"
    path.write_text(json.dumps(short_experiment(
        title, [KILL, START], rate=20, baseline_s=8, fault="kill-osd", restore="start-osd",
        tail_s=TAIL_S)))
    done = subprocess.run(["faultline", "run", str(path), "--trials", str(TRIALS)], env=env,
                          cwd=tmp_path, capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return [int(line.split()[-1]) for line in done.stdout.splitlines()
            if line.startswith("  trial ")]


def test_two_groups_of_the_same_experiment_are_never_called_different(
        ceph_cluster, env, tmp_path):
    first = _group(env, tmp_path, "aa first")
    second = _group(env, tmp_path, "aa second")
    assert len(first) == len(second) == TRIALS

    compared = subprocess.run(["faultline", "compare", *map(str, first + second), "--json"],
                              env=env, capture_output=True, text=True, timeout=120)
    assert compared.returncode == 0, compared.stderr
    trials = json.loads(compared.stdout)["trials"]
    assert [len(g["run_ids"]) for g in trials["groups"]] == [TRIALS, TRIALS], trials["groups"]
    figures = trials["differences"][0]["figures"]
    print("\nA/A on the Ceph lab, 6 vs 6 trials of kill osd.1:")
    for key, figure in figures.items():
        print(f"  {key}: {figure['text']}")
    judged = {key: f for key, f in figures.items() if f["verdict"] != "cannot tell"}
    assert judged, "no figure could be judged at 6 vs 6"
    # the recoveries were seen, so the A/A says something of them and not only of censoring
    for key in ("time_to_detect_s", "time_to_client_recovery_s",
                "time_to_full_redundancy_after_restore_s"):
        assert not any(side.startswith("0 of") for side in figures[key]["counts"]), \
            figures[key]
    assert not [key for key, f in figures.items() if f["verdict"] == "different"], figures
