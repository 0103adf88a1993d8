"""Spreads over trials (service.results.spread), the groups a comparison makes of its runs,
what enters them, and the verdicts between them (service.results.trial_groups, verdicts)."""

from __future__ import annotations

from service.results.comparison import compare_entries, format_comparison, format_value
from service.results.report import FIGURE_KEYS
from service.results.spread import Spread, spread


def test_a_spread_is_the_median_and_the_range_of_what_was_measured():
    s = spread([41.0, None, 36.0, 38.4])

    assert (s.n, s.median, s.low, s.high) == (3, 38.4, 36.0, 41.0)
    assert s.ci_low is None and s.ci_high is None
    assert spread([None, None]) is None


def test_from_six_trials_the_median_has_its_exact_interval_and_under_six_none():
    # P(Binomial(6, 1/2) = 0) = 1/64 <= 2.5%: min to max covers 96.9%; at 5 it is 93.75%
    assert spread([70.8, 64.0, 88.0, 69.0, 72.5, 71.0]).ci_low == 64.0
    assert spread([70.8, 64.0, 88.0, 69.0, 72.5, 71.0]).ci_high == 88.0
    assert spread([70.8, 64.0, 88.0, 69.0, 72.5]).ci_low is None
    nine = spread(list(range(1, 10)))
    assert (nine.ci_low, nine.ci_high) == (2, 8)  # P(Bin(9, 1/2) <= 1) = 10/512


def entry(run_id: int, cluster: str, group: str | None, **figures) -> dict:
    e = {"run_id": run_id, "title": "t", "cluster": cluster, "cluster_kind": "ceph",
         "status": "completed", "workload": {"rate": 50}, "error": None, "api": "rados",
         "fault": "kill", "fault_note": None, "topology_note": [], "reasons": {},
         "validity": {"valid": True, "reasons": [], "hint": None, "injected_anyway": False},
         "trial_group": group}
    return {**e, **{k: figures.get(k) for k in FIGURE_KEYS}}


def group(cluster: str, name: str, first_id: int, **values: list) -> list[dict]:
    n = len(next(iter(values.values())))
    return [entry(first_id + i, cluster, name, **{k: v[i] for k, v in values.items()})
            for i in range(n)]


def test_three_trials_a_side_cannot_tell_and_say_how_many_trials_would_be_needed():
    entries = (group("a", "g1", 1, time_to_detect_s=[36.0, 41.0, 38.4], lost_objects=[0] * 3)
               + group("b", "g2", 4, time_to_detect_s=[64.0, 88.0, 70.8], lost_objects=[0] * 3))
    trials = compare_entries(entries)["trials"]

    assert [g["run_ids"] for g in trials["groups"]] == [[1, 2, 3], [4, 5, 6]]
    assert [g["label"] for g in trials["groups"]] == ["a (rados), 3 trials from run 1",
                                                      "b (rados), 3 trials from run 4"]
    figures = trials["differences"][0]["figures"]
    # apart on every trial, but 3 vs 3 can reach 10% at best: min-max "different" is gone
    assert figures["time_to_detect_s"]["verdict"] == "cannot tell"
    assert figures["time_to_detect_s"]["needed_per_side"] == 4  # 2 / C(8, 4) <= 5%
    assert figures["time_to_detect_s"]["text"] == (
        "time to detect: cannot tell: too few trials (3 vs 3): the exact test's smallest "
        "p-value is 0.1, and Holm over 1 test asks 0.05 of the first; 4 per side can reach "
        "it (a 95% interval needs 4 per side). a (rados): 38.4 s [36.0 s to 41.0 s] (3 "
        "measured); b (rados): 70.8 s [64.0 s to 88.0 s] (3 measured)")
    assert figures["lost_objects"]["verdict"] == "cannot tell"
    assert "baseline_ops" not in figures  # measured on neither side
    assert trials["note"] is None


def test_six_trials_a_side_apart_are_different_with_the_shift_and_its_interval():
    entries = (group("ceph", "g1", 1, time_to_client_recovery_s=[35, 36, 34, 37, 35.5, 36.5],
                     errors=[0] * 6)
               + group("swift", "g2", 7, time_to_client_recovery_s=[70, 75, 68, 81, 72, 69],
                       errors=[0] * 6))
    figures = compare_entries(entries)["trials"]["differences"][0]["figures"]

    recovery = figures["time_to_client_recovery_s"]
    assert recovery["verdict"] == "different"
    assert recovery["shift"] == 35.25  # the median of the 36 differences
    assert recovery["text"].startswith(
        "time to client recovery: different: swift (rados) 35.2 s later than ceph (rados) "
        "[+32.5 s to +44.0 s], p 0.00216 after Holm")  # errors, 0 everywhere, cannot reject
    assert figures["errors"]["verdict"] == "no meaningful difference"  # 0 everywhere


def test_settings_and_inputs_are_shown_but_never_judged():
    entries = (group("a", "g1", 1, baseline_ops=[50.0] * 6, restore_at_s=[30.0] * 6,
                     throughput_drop=[0.1] * 6)
               + group("b", "g2", 7, baseline_ops=[100.0] * 6, restore_at_s=[60.0] * 6,
                       throughput_drop=[0.5] * 6))
    trials = compare_entries(entries)["trials"]

    assert trials["groups"][0]["figures"]["restore_at_s"]["median"] == 30.0
    assert trials["differences"][0]["figures"] == {}


def test_the_comparison_names_its_method_and_what_chance_alone_would_give():
    entries = (group("a", "g1", 1, time_to_detect_s=[1.0, 1.1, 0.9, 1.2])
               + group("b", "g2", 5, time_to_detect_s=[1.0, 1.3, 0.8, 1.1]))
    data = compare_entries(entries)
    text = " ".join(format_comparison(data, width=300).split())

    assert data["trials"]["method"].startswith("Method: per outcome figure, a two-sided exact "
                                               "rank test")
    assert data["trials"]["differences"][0]["tests"] == 1
    assert ("the chance of one or more false 'different' lines from this one test is at "
            "most 5% (Holm), so of 20 such comparisons of identical conditions at most 1 is "
            "expected to show any") in text
    assert "within noise" not in text


def test_only_completed_runs_whose_baseline_held_and_fault_took_enter_and_each_says_why():
    entries = group("a", "g1", 1, baseline_ops=[50.0, 45.3, 49.0, 48.0, 47.0],
                    time_to_detect_s=[1.0, 9.0, 1.2, 9.0, 9.0])
    entries[1]["validity"] = {"valid": False, "reasons": ["45.3 of 50 ops/s"], "hint": None,
                              "injected_anyway": True}
    entries[3].update(status="invalid", error="the fault did not take: osd.3 still up")
    entries[4].update(status="interrupted", error=None)
    data = compare_entries(entries + group("b", "g2", 6, time_to_detect_s=[1.0, 1.1]))
    g = data["trials"]["groups"][0]

    assert g["entered"] == 2 and g["left_out"] == [2, 4, 5]
    assert g["label"] == "a (rados), 5 trials from run 1, 3 left out"
    assert [w["why"] for w in g["left_out_why"]] == [
        "its baseline did not hold (the fault was injected anyway)",
        "the run is invalid: the fault did not take: osd.3 still up",
        "the run is interrupted"]
    assert g["figures"]["time_to_detect_s"] == Spread(2, 1.1, 1.0, 1.2).as_dict()
    assert "run 4 left out: the run is invalid: the fault did not take" in \
        format_comparison(data, width=300)


def test_a_trial_that_never_recovered_is_counted_not_dropped():
    never = "throughput never stayed within 5% of the baseline"
    entries = (group("a", "g1", 1, time_to_client_recovery_s=[30.0, 31.0, None])
               + group("b", "g2", 4, time_to_client_recovery_s=[30.5, 29.0, 32.0]))
    entries[2]["reasons"] = {"time_to_client_recovery_s": never}
    entries[2]["observed_s"] = 120.0
    f = compare_entries(entries)["trials"]["differences"][0]["figures"][
        "time_to_client_recovery_s"]

    assert f["counts"][0] == "30.5 s [30.0 s to 31.0 s] (2 of 3 measured), 1 of 3 never " \
                             "recovered (> 120.0 s)"
    assert f["shift"] is None  # censored: no size, only the test and the counts


def test_single_runs_say_that_the_noise_cannot_be_told_and_cannot_tell():
    data = compare_entries([entry(1, "a", None, time_to_detect_s=36.0),
                            entry(2, "b", None, time_to_detect_s=64.0)])

    assert data["trials"]["note"].startswith("Each figure comes from a single run")
    assert data["trials"]["differences"][0]["figures"]["time_to_detect_s"]["verdict"] == \
        "cannot tell"
    assert "faultline run --trials 3" in format_comparison(data, width=200)
    assert format_value("time_to_detect_s", 36.0) == "36.0 s"


def test_a_group_of_scale_trials_judges_its_capacity_change_by_the_signed_rank_test():
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

    assert groups[0]["capacity"]["verdict"] == "cannot tell"  # 3 trials: 25% at best
    assert groups[1]["capacity"] is None  # no scale run
    assert ("capacity before 1150 ops/s [939 to 1153], after 1052 ops/s [850 to 1053], change "
            "-8.7% [-9.5% to -8.5%] over 3 trials: cannot tell (p 0.25") in \
        " ".join(format_comparison(data, width=300).split())
