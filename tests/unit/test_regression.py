"""Regression detection for a scheduled series (service.results.regression): the exact rank
test of a night against its series, on synthetic series with known answers.

The series: a Ceph kill-OSD run every night, whose clients recover in about 12 s, whose
cluster is fully redundant again in about 52 s (and 30 s after the restore), with a
deficit of about 6 s of full load, a handful of errors and no lost object.
"""

from __future__ import annotations

import json
import random

import pytest

from service.results.regression import (
    DEFAULT_RULES,
    FigureRule,
    RegressionPolicy,
    judge,
    limit_of,
    rank_p,
)

REDUNDANCY = [50.0, 52.1, 55.0, 51.0, 53.0, 52.5, 49.5, 54.0, 51.5, 52.0]
RECOVERY = [12.0, 11.0, 13.0, 12.5, 11.5, 12.0, 12.2, 11.8, 12.6, 12.1]
DEFICIT = [6.0, 6.2, 5.8, 6.4, 6.0, 5.6, 6.3, 6.1, 5.9, 6.0]
ERRORS = [4, 3, 5, 4, 6, 4, 3, 5, 4, 4]
AFTER_RESTORE = [30.0, 31.0, 29.5, 30.5, 30.0, 32.0, 29.0, 30.0, 31.0, 30.5]


def run(**figures) -> dict:
    """One run's figures, as report_dict gives them: a typical night unless told otherwise."""
    data = {"deficit_s": 6.0, "throughput_drop": 0.20, "worst_second_drop": 1.0, "errors": 4,
            "time_to_detect_s": 2.0, "time_to_client_recovery_s": 12.0,
            "time_to_full_redundancy_s": 52.0, "time_to_full_redundancy_after_restore_s": 30.0,
            "data_at_risk_s": 40.0, "lost_objects": 0, "corrupt_objects": 0, "reasons": {}}
    data.update(figures)
    return data


def series(n: int = 20, **overrides) -> list[dict]:
    """n stable earlier runs, oldest first; an override is a list of values, one per run."""
    runs = []
    for i in range(n):
        figures = {"time_to_full_redundancy_s": REDUNDANCY[i % 10],
                   "time_to_client_recovery_s": RECOVERY[i % 10],
                   "deficit_s": DEFICIT[i % 10], "errors": ERRORS[i % 10],
                   "time_to_full_redundancy_after_restore_s": AFTER_RESTORE[i % 10]}
        figures.update({key: values[i] for key, values in overrides.items()})
        runs.append(run(**figures))
    return runs


# regressions ------------------------------------------------------------------------------


def test_a_value_far_worse_than_a_stable_history_is_a_regression_naming_the_figure():
    verdict = judge(run(time_to_full_redundancy_s=84.0), series())

    assert verdict.status == "regression"
    [finding] = verdict.findings
    assert finding.figure == "time_to_full_redundancy_s"
    assert finding.kind == "worse"
    assert (finding.value, finding.median, finding.history_values) == (84.0, 52.05, 20)
    assert finding.limit == pytest.approx(62.46)  # the floor: median + 20%
    assert finding.p == pytest.approx(1 / 21)
    assert finding.reason == ("time to full redundancy 84.0 s is worse than the last 20 runs "
                              "(median 52.0 s [49.5 s to 55.0 s], limit 62.5 s; rank test "
                              "p 0.0476)")
    assert verdict.summary == finding.reason


def test_a_value_within_the_noise_of_the_history_is_ok():
    verdict = judge(run(time_to_full_redundancy_s=55.5, time_to_client_recovery_s=13.0,
                        deficit_s=7.5, errors=7), series())

    assert verdict.status == "ok"
    assert verdict.findings == ()
    assert verdict.summary == "no figure is worse than the last 20 runs"


def test_a_better_value_is_never_a_regression():
    verdict = judge(run(time_to_full_redundancy_s=5.0, time_to_client_recovery_s=0.0,
                        deficit_s=0.0, errors=0), series())

    assert verdict.status == "ok"


def test_every_figure_that_is_worse_is_a_finding_in_the_rules_order():
    verdict = judge(run(errors=80, deficit_s=30.0, time_to_client_recovery_s=40.0,
                        time_to_full_redundancy_after_restore_s=90.0), series())

    assert [f.figure for f in verdict.findings] == [
        "deficit_s", "errors", "time_to_client_recovery_s",
        "time_to_full_redundancy_after_restore_s"]
    assert [f.reason for f in verdict.findings][:2] == [
        "deficit 30.0 s is worse than the last 20 runs (median 6.0 s [5.6 s to 6.4 s], "
        "limit 8.0 s; rank test p 0.0476)",
        "error count 80 is worse than the last 20 runs (median 4 [3 to 6], limit 14; rank "
        "test p 0.0476)"]


def test_the_rank_test_p_value_counts_the_earlier_runs_at_or_above_the_value():
    assert rank_p(10.0, [1.0] * 19) == 1 / 20
    assert rank_p(10.0, [1.0] * 18 + [10.0]) == 2 / 20  # a tie counts against
    assert rank_p(10.0, [1.0] * 17 + [20.0, 30.0]) == 3 / 20


def test_a_value_must_rank_above_what_5_percent_allows_before_the_floors_count():
    values = [40.0 + i for i in range(19)]  # 40..58 s, median 49
    rule = DEFAULT_RULES[3]  # time to full redundancy, floor 5 s or 20%

    # 19 values: 1 / 20 = 5%, so only a value above all of them can be worse
    assert limit_of(rule, values, 0.05) == (49.0, 58.8)  # the floor: 49 + 20%
    assert limit_of(rule, values[:-1] + [90.0], 0.05) == (49.0, 90.0)  # the slowest night


def test_one_wild_night_no_longer_sets_the_limit_once_the_window_is_full():
    wild = [400.0] + REDUNDANCY * 3 + REDUNDANCY[:9]  # 40 runs, one of them 400 s
    history = series(40, time_to_full_redundancy_s=wild)

    verdict = judge(run(time_to_full_redundancy_s=80.0), history)

    # 40 values: p = (1 + 1) / 41 = 4.9%, so one earlier night at or above it is allowed
    assert verdict.status == "regression"
    assert verdict.findings[0].limit == pytest.approx(62.52)  # the floor (median 52.1 s + 20%)
    assert verdict.findings[0].p == pytest.approx(2 / 41)


@pytest.mark.parametrize(("key", "history_value", "largest_ok", "smallest_regression"), [
    ("deficit_s", 6.0, 8.0, 8.1),  # 2 s ...
    ("deficit_s", 20.0, 24.0, 24.1),  # ... or 20%
    ("errors", 0, 10, 11),  # 10 errors ...
    ("errors", 40, 60, 61),  # ... or 50%
    ("time_to_client_recovery_s", 10.0, 15.0, 15.1),  # 5 s ...
    ("time_to_client_recovery_s", 100.0, 120.0, 120.1),  # ... or 20%
    ("time_to_full_redundancy_s", 52.0, 62.4, 62.5),
    ("time_to_full_redundancy_after_restore_s", 20.0, 25.0, 25.1),
])
def test_a_figure_must_be_worse_than_its_floor_even_in_a_series_without_spread(
        key, history_value, largest_ok, smallest_regression):
    history = [run(**{key: history_value}) for _ in range(20)]

    assert judge(run(**{key: largest_ok}), history).status == "ok"
    verdict = judge(run(**{key: smallest_regression}), history)
    assert verdict.status == "regression"
    assert [f.figure for f in verdict.findings] == [key]


def test_a_series_of_identical_conditions_flags_a_figure_on_at_most_5_percent_of_nights():
    # A/A: every night drawn from one distribution, floors at 0 so the test alone decides
    rng = random.Random(26)
    rule = FigureRule("time_to_client_recovery_s", "time to client recovery", "s", 0.0)
    policy = RegressionPolicy(rules=(rule,))
    flagged = 0
    for _ in range(1000):
        nights = [run(time_to_client_recovery_s=rng.lognormvariate(2.5, 0.3))
                  for _ in range(41)]
        flagged += judge(nights[-1], nights[:-1], policy).status == "regression"
    print(f"A/A nightly series: {flagged / 1000:.1%} of 1000 nights flagged at alpha 5%")
    assert flagged / 1000 <= 0.05


# failures ---------------------------------------------------------------------------------


def test_a_lost_object_is_a_failure_whatever_the_history():
    verdict = judge(run(lost_objects=1), [])

    assert verdict.status == "failure"
    [finding] = verdict.findings
    assert (finding.figure, finding.kind, finding.value) == ("lost_objects", "lost", 1)
    assert finding.reason == "1 acknowledged object was lost (missing after recovery)"


def test_a_corrupt_object_is_a_failure():
    verdict = judge(run(corrupt_objects=3), series())

    assert verdict.status == "failure"
    assert verdict.summary == "3 acknowledged objects read back with the wrong content"


def test_a_failure_still_lists_the_regressions_after_the_lost_objects():
    verdict = judge(run(lost_objects=2, time_to_full_redundancy_s=84.0), series())

    assert verdict.status == "failure"
    assert [f.kind for f in verdict.findings] == ["lost", "worse"]


# history ----------------------------------------------------------------------------------


@pytest.mark.parametrize("earlier_runs", [0, 1, 18])
def test_too_little_history_for_the_test_to_reach_5_percent_is_insufficient(earlier_runs):
    verdict = judge(run(time_to_full_redundancy_s=500.0), series(earlier_runs))

    assert verdict.status == "insufficient_history"
    assert verdict.findings == ()
    assert verdict.judged == ()
    assert verdict.history_runs == earlier_runs


def test_insufficient_history_says_what_would_be_enough():
    assert judge(run(), series(2)).summary == (
        "insufficient history: 2 earlier runs, a figure is judged once 19 earlier runs "
        "measured it")


def test_a_figure_with_fewer_values_than_the_test_needs_is_not_judged_while_others_are():
    history = series(20, time_to_client_recovery_s=[None, None] + [12.0] * 18)

    verdict = judge(run(time_to_client_recovery_s=90.0), history)

    assert verdict.status == "ok"
    assert "time_to_client_recovery_s" not in verdict.judged
    assert "time_to_full_redundancy_s" in verdict.judged


def test_null_values_in_the_history_are_skipped():
    history = series(21, time_to_full_redundancy_s=[None] + REDUNDANCY * 2)

    verdict = judge(run(time_to_full_redundancy_s=90.0), history)

    [finding] = verdict.findings
    assert (finding.median, finding.history_values) == (52.05, 20)
    assert "worse than the 20 of the last 21 runs that measured it" in finding.reason


def test_the_window_holds_only_the_last_n_runs():
    slow_old = series(50, time_to_full_redundancy_s=[300.0] * 10 + REDUNDANCY * 4)

    verdict = judge(run(time_to_full_redundancy_s=84.0), slow_old)

    assert verdict.history_runs == 40
    assert verdict.status == "regression"
    assert verdict.findings[0].median == pytest.approx(52.05)


def test_a_policy_at_a_higher_error_rate_judges_a_shorter_history_and_says_so():
    policy = RegressionPolicy(window=4, alpha=0.25)  # 1 / (3 + 1) = 25%: 3 runs suffice

    verdict = judge(run(time_to_client_recovery_s=30.0), series(), policy)

    assert policy.min_history == 3
    assert verdict.history_runs == 4
    assert verdict.findings[0].reason == ("time to client recovery 30.0 s is worse than the "
                                          "last 4 runs (median 12.1 s [11.8 s to 12.6 s], "
                                          "limit 17.1 s; rank test p 0.2)")
    assert "at most 25% of the nights" in verdict.error_rate


# null figures -----------------------------------------------------------------------------


def test_a_null_figure_that_the_history_mostly_measured_is_a_regression_with_its_reason():
    why = ("throughput never stayed within 5% of the baseline with zero errors for 10 s and "
           "until the end of the fault window before the load ended")
    new = run(time_to_client_recovery_s=None, reasons={"time_to_client_recovery_s": why})

    verdict = judge(new, series())

    assert verdict.status == "regression"
    [finding] = verdict.findings
    assert (finding.figure, finding.kind, finding.value, finding.limit) == (
        "time_to_client_recovery_s", "missing", None, None)
    assert finding.reason == (f"time to client recovery: n/a ({why}), but the last 20 runs "
                              "measured it (median 12.1 s)")


def test_a_null_figure_without_a_reason_is_still_a_regression():
    history = series(21, time_to_full_redundancy_s=[None] + REDUNDANCY * 2)

    verdict = judge(run(time_to_full_redundancy_s=None), history)

    assert verdict.findings[0].reason == ("time to full redundancy: n/a, but 20 of the last 21 "
                                          "runs measured it (median 52.0 s)")


def test_a_null_figure_that_the_history_mostly_lacked_is_not_held_against_the_run():
    # Swift waits for the restore: its time to full redundancy while the fault persists is
    # normally n/a, and a night that measured it now and then sets no expectation
    history = series(40, time_to_full_redundancy_s=[None] * 20 + [390.0] * 20)

    verdict = judge(run(time_to_full_redundancy_s=None), history)

    assert verdict.status == "ok"
    assert "time_to_full_redundancy_s" in verdict.judged


def test_unverified_objects_where_the_history_verified_them_are_a_regression():
    new = run(lost_objects=None, corrupt_objects=None,
              reasons={"lost_objects": "no verify phase ran",
                       "corrupt_objects": "no verify phase ran"})

    verdict = judge(new, series())

    assert verdict.status == "regression"
    assert [f.reason for f in verdict.findings] == [
        "lost objects: n/a (no verify phase ran), but the last 20 runs measured it (median 0)",
        "corrupt objects: n/a (no verify phase ran), but the last 20 runs measured it "
        "(median 0)"]


# policy and output ------------------------------------------------------------------------


def test_an_invalid_policy_is_refused_with_every_problem():
    with pytest.raises(ValueError) as caught:
        RegressionPolicy(window=10, rules=(FigureRule("errors", "error count", "", -1),))

    assert str(caught.value) == (
        "invalid regression policy: a window of 10 runs cannot reach alpha 0.05: it needs at "
        "least 19; the floors of errors must not be negative, got -1 and 0.0")
    with pytest.raises(ValueError, match="alpha must be between 0 and 1, got 1.5"):
        RegressionPolicy(alpha=1.5)


def test_the_verdict_states_its_error_rate():
    verdict = judge(run(), series())

    assert verdict.error_rate == (
        "where nothing changed, each judged figure is falsely 'worse' on at most 5% of the "
        "nights (exact rank test against the series); this night's 5 judged figures on at "
        "most 25% (Bonferroni)")


def test_a_policy_can_judge_another_figure():
    data_at_risk = FigureRule("data_at_risk_s", "data at risk", "s", 5.0, 0.2)
    policy = RegressionPolicy(rules=(*DEFAULT_RULES, data_at_risk))

    verdict = judge(run(data_at_risk_s=120.0), series(), policy)

    assert verdict.findings[0].reason == ("data at risk 120.0 s is worse than the last 20 runs "
                                          "(median 40.0 s [40.0 s to 40.0 s], limit 48.0 s; "
                                          "rank test p 0.0476)")


def test_a_figure_that_is_not_a_number_is_a_type_error():
    with pytest.raises(TypeError, match="figure errors is 'many', not a number"):
        judge(run(errors="many"), series())


def test_the_verdict_as_a_dict_is_json():
    verdict = judge(run(lost_objects=1, time_to_full_redundancy_s=84.0), series())

    data = json.loads(json.dumps(verdict.as_dict()))

    assert data["status"] == "failure"
    assert data["history_runs"] == 20
    assert data["findings"][1]["figure"] == "time_to_full_redundancy_s"
    assert data["findings"][1]["limit"] == pytest.approx(62.46)
    assert data["findings"][1]["p"] == pytest.approx(1 / 21)
    assert data["judged"] == list(verdict.judged)
    assert data["error_rate"] == verdict.error_rate
