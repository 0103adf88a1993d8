"""Spreads over trials and the "different / within noise" rule (service.results.spread), and
the groups a comparison makes of its runs (service.results.trial_groups)."""

from __future__ import annotations

import pytest

from service.results.comparison import compare_entries, format_comparison, format_value
from service.results.report import FIGURE_KEYS
from service.results.spread import Spread, spread, verdict


def test_a_spread_is_the_median_and_the_range_of_what_was_measured():
    s = spread([41.0, None, 36.0, 38.4])

    assert (s.n, s.median, s.low, s.high) == (3, 38.4, 36.0, 41.0)
    assert s.ci_low is None and s.interval() == (36.0, 41.0)
    assert spread([None, None]) is None


def test_from_five_trials_a_bootstrap_interval_lies_within_the_range_and_is_stable():
    values = [70.8, 64.0, 88.0, 69.0, 72.5, 71.0]
    s = spread(values)

    assert s.low <= s.ci_low <= s.median <= s.ci_high <= s.high
    assert spread(list(reversed(values))) == s  # the same figures, the same interval


@pytest.mark.parametrize("a, b, said", [
    ([36, 38.4, 41], [64, 70.8, 88], "different"),
    ([36, 38.4, 41], [40, 45, 50], "within noise"),  # the ranges overlap
    ([0, 0, 0], [0, 0, 0], "within noise"),
    ([36], [64, 70.8, 88], None),  # no spread on one side: no verdict
])
def test_two_groups_differ_only_when_their_intervals_do_not_overlap(a, b, said):
    assert verdict(spread(a), spread(b)) == said


def test_with_five_trials_the_intervals_not_the_ranges_decide():
    # the ranges touch (an outlier each), the medians' intervals are far apart
    a = spread([10, 10.2, 10.1, 9.9, 10.0, 10.3, 30])
    b = spread([20, 20.1, 19.9, 20.2, 20.0, 19.8, 5])
    assert a.low <= b.high and b.low <= a.high
    assert verdict(a, b) == "different"


def entry(run_id: int, cluster: str, group: str | None, **figures) -> dict:
    e = {"run_id": run_id, "title": "t", "cluster": cluster, "cluster_kind": "ceph",
         "status": "completed", "workload": {"rate": 50}, "error": None, "api": "rados",
         "fault": "kill", "fault_note": None, "topology_note": [], "reasons": {},
         "validity": {"valid": True, "reasons": [], "hint": None, "injected_anyway": False},
         "trial_group": group}
    return {**e, **{k: figures.get(k) for k in FIGURE_KEYS}}


def test_runs_of_one_trial_group_are_one_group_and_each_figure_gets_a_verdict():
    entries = [entry(1, "a", "g1", time_to_detect_s=36.0, lost_objects=0),
               entry(2, "a", "g1", time_to_detect_s=41.0, lost_objects=0),
               entry(3, "a", "g1", time_to_detect_s=38.4, lost_objects=0),
               entry(4, "b", "g2", time_to_detect_s=64.0, lost_objects=0),
               entry(5, "b", "g2", time_to_detect_s=88.0, lost_objects=0),
               entry(6, "b", "g2", time_to_detect_s=70.8, lost_objects=0)]
    trials = compare_entries(entries)["trials"]

    assert [g["run_ids"] for g in trials["groups"]] == [[1, 2, 3], [4, 5, 6]]
    assert [g["label"] for g in trials["groups"]] == ["a (rados), 3 trials from run 1",
                                                      "b (rados), 3 trials from run 4"]
    figures = trials["differences"][0]["figures"]
    assert figures["time_to_detect_s"] == {
        "verdict": "different",
        "text": "a (rados), 3 trials from run 1 38.4 s [36.0 s to 41.0 s] vs b (rados), 3 "
                "trials from run 4 70.8 s [64.0 s to 88.0 s]: different"}
    assert figures["lost_objects"]["verdict"] == "within noise"
    assert "baseline_ops" not in figures  # measured on neither side
    assert trials["note"] is None


def test_a_run_whose_baseline_did_not_hold_is_left_out_of_its_group():
    entries = [entry(1, "a", "g1", baseline_ops=50.0), entry(2, "a", "g1", baseline_ops=45.3),
               entry(3, "a", "g1", baseline_ops=49.0)]
    entries[1]["validity"] = {"valid": False, "reasons": ["45.3 of 50 ops/s"], "hint": None,
                              "injected_anyway": False}
    group = compare_entries(entries)["trials"]["groups"][0]

    assert group["left_out"] == [2]
    assert group["figures"]["baseline_ops"] == Spread(2, 49.5, 49.0, 50.0).as_dict()


def test_single_runs_say_that_the_noise_cannot_be_told_and_get_no_verdict():
    data = compare_entries([entry(1, "a", None, time_to_detect_s=36.0),
                            entry(2, "b", None, time_to_detect_s=64.0)])

    assert data["trials"]["note"].startswith("Each figure comes from a single run")
    assert data["trials"]["differences"][0]["figures"]["time_to_detect_s"]["verdict"] is None
    assert "faultline run --trials 3" in format_comparison(data, width=200)
    assert format_value("time_to_detect_s", 36.0) == "36.0 s"


def test_a_group_of_scale_trials_says_whether_its_capacity_change_is_beyond_the_noise():
    from service.results.capacity_change import calibration_figures, change

    def capacity(before: float, after: float) -> dict:
        row = {"status": "completed", "capacity_mbps": None, "knee_in_flight": 8,
               "generator_bound": False, "stop_reason": "", "error": None}
        make = lambda i, ops: type("Row", (), {**row, "id": i, "capacity_ops": ops})  # noqa: E731
        return change(calibration_figures(make(1, before)), calibration_figures(make(2, after)))

    entries = [entry(i, "a", "g1") for i in (1, 2, 3)] + [entry(4, "b", None)]
    for e, (b, a) in zip(entries, [(1150, 1052), (939, 850), (1153, 1053)], strict=False):
        e["capacity"] = capacity(b, a)
    data = compare_entries(entries)
    groups = data["trials"]["groups"]

    assert groups[0]["capacity"]["verdict"] == "different"
    assert groups[1]["capacity"] is None  # no scale run
    assert ("capacity before 1150 ops/s [939 to 1153], after 1052 ops/s [850 to 1053], change "
            "-8.7% [-9.5% to -8.5%] over 3 trials: a change beyond the noise") in \
        " ".join(format_comparison(data, width=300).split())
