"""The three-way suite: the same workload and fault class on Ceph through librados, on Ceph
through RGW's Swift API and on Swift, run one after the other and compared."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from service.results.report import FIGURE_KEYS

REPO = Path(__file__).resolve().parents[2]
SUITE = REPO / "experiments" / "suites" / "kill-process.json"

# make test-full only: each kill also runs alone in make test
pytestmark = [pytest.mark.lab, pytest.mark.full]


def test_suite_compares_every_figure_of_the_three_runs(ceph_cluster, swift_cluster, env,
                                                       database_url):
    done = subprocess.run(["faultline", "suite", str(SUITE), "--json"], env=env, cwd=REPO,
                          capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert result["ok"] is True
    assert [r["name"] for r in result["runs"]] == ["ceph-librados", "ceph-rgw-swift-api", "swift"]
    data = result["comparison"]

    runs = data["runs"]
    assert [(r["cluster_kind"], r["api"]) for r in runs] == [
        ("ceph", "rados"), ("ceph", "swift"), ("swift", "swift")]
    assert all(r["status"] == "completed" for r in runs), [r.get("error") for r in runs]
    # every figure of every run is in the table: a value, or n/a with the reason
    assert set(FIGURE_KEYS) <= set(data["table"])
    for key in FIGURE_KEYS:
        cells = data["table"][key]
        assert len(cells) == 3
        assert all(c["value"] is not None or c["reason"] for c in cells), (key, cells)
    table = {key: [c["value"] for c in cells] for key, cells in data["table"].items()}
    assert table["lost_objects"] == [0, 0, 0]
    assert all(v is not None for v in table["time_to_detect_s"])
    assert all(v is not None for v in table["time_to_full_redundancy_after_restore_s"])
    # Ceph re-replicates while the OSD is dead; Swift waits for the restore
    assert table["time_to_full_redundancy_s"][0] is not None
    assert table["time_to_full_redundancy_s"][1] is not None
    assert table["time_to_full_redundancy_s"][2] is None
    assert any("re-replicates" in c for c in data["caveats"])
    assert any("RGW" in c for c in data["caveats"])
