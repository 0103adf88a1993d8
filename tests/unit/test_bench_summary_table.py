"""bench/summary_table.py: the README's table says each row's figures, verdict and commit."""

from bench.summary_table import table

SUMMARY = {"machine": {"cpus": 2, "platform": "Linux", "python": "3.11.2"}, "benchmarks": {
    "P1-ceph": {"commit": "abc1234", "started": "2026-11-28T08:40:13Z", "exit": 0, "rows": [
        {"id": "P1-ceph", "what": "write", "value": 395.191, "unit": "ops/s",
         "reference": 405.0, "reference_name": "rados bench", "ratio": 0.976,
         "target": ">= 0.95x", "met": False, "gap": "the interval's low end is 0.862x"}]},
    "P5": {"commit": "def5678", "started": "2026-11-28T09:30:00Z", "exit": 1, "rows": []}}}


def test_each_row_names_its_figures_its_verdict_and_where_it_was_measured():
    lines = table(SUMMARY).splitlines()

    assert lines[0] == "Machine: 2 CPUs, Linux, Python 3.11.2."
    assert lines[4] == ("| P1-ceph | write | 395.191 ops/s | rados bench 405.000 ops/s | 0.976 "
                        "| >= 0.95x | **not met** (the interval's low end is 0.862x) "
                        "| abc1234, 2026-11-28T08:40:13Z |")
    assert lines[5].startswith("| P5 | the benchmark itself failed (exit 1)")
