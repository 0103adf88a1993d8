"""A scale run's capacity before and after (service.results.capacity_change), its control
argument (service.results.capacity.capacity_plan) and its report lines, on plain values."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from service.results.capacity import capacity_plan
from service.results.capacity_change import (
    ONE_TRIAL,
    calibration_figures,
    capacity_lines,
    capacity_verdict,
    change,
    movement_done_s,
)
from service.results.exceptions import InvalidCalibration
from service.results.report import scale_lines


def row(ident: int, ops: float | None, bound: bool = False, status: str = "completed",
        error: str | None = None) -> SimpleNamespace:
    return SimpleNamespace(id=ident, status=status, capacity_ops=ops, capacity_mbps=None,
                           knee_in_flight=8 if ops else None, generator_bound=bound,
                           stop_reason="rose less than 5%", error=error)


def test_two_valid_calibrations_give_the_measured_change():
    data = change(calibration_figures(row(1, 400.0)), calibration_figures(row(2, 500.0)))
    assert data["change"] == 0.25 and data["reason"] is None
    assert capacity_lines(data) == [
        f"capacity 400 -> 500 ops/s (+25.0%; {ONE_TRIAL})",
        "before: calibration 1, 400 ops/s, knee at 8 in flight (valid)",
        "after: calibration 2, 500 ops/s, knee at 8 in flight (valid)"]


def test_a_generator_bound_knee_shows_both_figures_but_no_change():
    data = change(calibration_figures(row(1, 400.0)), calibration_figures(row(2, 410.0, True)))
    assert data["change"] is None
    assert "calibration 2's load generator was the bottleneck" in data["reason"]
    assert capacity_lines(data)[0].startswith("capacity 400 -> at least 410 ops/s (change n/a")


def test_a_failed_or_missing_calibration_is_said_not_invented():
    failed = calibration_figures(None, "ClusterNotHealthy: HEALTH_WARN")
    assert failed["valid"] is False and "HEALTH_WARN" in failed["why"]
    data = change(calibration_figures(row(1, 400.0)), failed)
    assert data["change"] is None and "no calibration was made" in data["reason"]
    assert capacity_lines(data)[0].startswith("capacity 400 -> n/a ops/s (change n/a")
    assert change(calibration_figures(row(1, 400.0)), None)["reason"] == \
        "no calibration after the scale action was made"
    no_knee = calibration_figures(row(3, None, error="errors in every stage"))
    assert no_knee["why"] == "calibration 3 found no knee (errors in every stage)"
    assert not calibration_figures(row(4, None, status="failed"))["valid"]


def test_data_movement_is_done_once_clean_without_misplaced_objects_for_the_hold():
    def state(clean: bool, misplaced: int = 0) -> dict:
        return {"fully_redundant": clean, "misplaced_objects": misplaced}
    samples = [(99.0, state(True)), (100.5, state(False, 30)), (103.0, state(True, 5)),
               (106.0, state(True)), (111.0, state(False)),  # a relapse starts over
               (112.0, state(True)), (117.0, state(True)), (122.0, state(True))]
    assert movement_done_s(samples, since=100.0) == 12.0
    assert movement_done_s(samples[:6], since=100.0) is None  # never held 10 s


def test_scale_lines_only_for_a_scale_run():
    assert scale_lines({"capacity": None}) == []
    lines = scale_lines({"capacity": change(None, None), "data_movement_s": None,
                         "data_movement_reason": "still misplaced"})
    assert lines[0] == ("data movement done after n/a (still misplaced) (no misplaced or "
                        "degraded object, fully redundant, for 10 s)")


def test_the_capacity_argument_names_an_activity_of_the_method():
    experiment = {"method": [{"name": "add-osd"}, {"name": "data-movement-done"}]}
    checked = capacity_plan({"after": "data-movement-done", "stage_s": 4, "max_in_flight": 16},
                   experiment)
    assert checked.after == "data-movement-done" and checked.settings.stage_s == 4
    assert capacity_plan(None, experiment) is None
    with pytest.raises(InvalidCalibration, match="'nope' is not an activity of the method"):
        capacity_plan({"after": "nope"}, experiment)
    with pytest.raises(InvalidCalibration, match="stage length must be 3 to 600 s, not 1"):
        capacity_plan({"after": "add-osd", "stage_s": 1}, experiment)
    with pytest.raises(InvalidCalibration, match="expected an object with 'after'"):
        capacity_plan("50%", experiment)


def _trial(before: float, after: float, bound: bool = False) -> dict:
    return change(calibration_figures(row(1, before)), calibration_figures(row(2, after, bound)))


def test_three_trials_that_all_fell_cannot_tell_a_change_by_the_signed_rank_test():
    # the lab's Ceph runs: each pair, minutes apart, fell; but three signs alike happen by
    # chance 2 in 8 times (the old sign rule's 25% false positives): the exact test says so
    fell = capacity_verdict([_trial(1150, 1052), _trial(939, 850), _trial(1153, 1053)])

    assert fell["verdict"] == "cannot tell" and fell["trials"] == 3
    assert fell["p"] == pytest.approx(0.25)
    assert fell["text"] == (
        "capacity before 1150 ops/s [939 to 1153], after 1052 ops/s [850 to 1053], change "
        "-8.7% [-9.5% to -8.5%] over 3 trials: cannot tell (p 0.25; the exact signed-rank "
        "test cannot reach 5% under 6 trials)")


def test_six_trials_that_all_fell_are_a_change_with_its_interval():
    fell = capacity_verdict([_trial(1000, 1000 - d) for d in (80, 85, 90, 95, 87, 92)])

    assert fell["verdict"] == "different"
    assert fell["p"] == pytest.approx(2 / 64)
    assert (fell["low"], fell["high"]) == (pytest.approx(-0.095), pytest.approx(-0.08))
    assert fell["text"].endswith("different (signed-rank test p 0.0312, 95% interval -9.5% "
                                 "to -8.0%)")


def test_changes_on_both_sides_inside_the_margin_are_no_meaningful_difference():
    steady = capacity_verdict([_trial(1000, 1000 + d) for d in (-5, 3, -2, 4, 0, -1, 2, 1)])
    mixed = capacity_verdict([_trial(129.2, 77.6), _trial(128.8, 207.6), _trial(130, 131)])

    assert steady["verdict"] == "no meaningful difference"
    assert "inside +-2%" in steady["text"]
    assert mixed["verdict"] == "cannot tell"


def test_trials_without_a_measured_change_are_left_out_and_one_trial_gets_no_verdict():
    data = capacity_verdict([_trial(400, 500), _trial(400, 410, bound=True), None])

    assert (data["trials"], data["left_out"], data["verdict"]) == (1, 2, None)
    assert data["text"].endswith("over 1 trial: no verdict from a single trial")
    assert capacity_verdict([None, None]) is None
    assert capacity_verdict([_trial(400, 410, bound=True)])["text"] == (
        "capacity change n/a: no trial measured both calibrations validly")


def _group(name: str, changes: list[int]) -> list[dict]:
    # runs of one trial group whose only figure is the capacity (before 1000 ops/s)
    return [{"run_id": i, "trial_group": name, "status": "completed", "cluster": "lab-ceph",
             "api": "rados", "capacity": _trial(1000, 1000 + d)} for i, d in enumerate(changes)]


def test_a_scale_group_is_judged_against_its_pause_control_group():
    from service.results.formatting import format_value
    from service.results.trial_groups import trial_groups

    # the order of the two calibrations alone lowers the second by about 3%: the control
    # shows it, and the gain of the scale action is judged net of it
    control = _group("pause", [-35, -28, -31, -25, -33, -30])
    scale = _group("scale", [210, 232, 225, 218, 240, 229])
    judged = trial_groups(control + scale, {}, format_value)["differences"][0]["figures"]

    verdict = judged["capacity_change"]
    assert verdict["verdict"] == "different"
    assert verdict["low"] > 0.2 and verdict["high"] < 0.3  # the net gain, about 25 points
    assert "capacity change" in verdict["text"]


def test_two_pause_controls_are_no_meaningful_capacity_difference():
    from service.results.formatting import format_value
    from service.results.trial_groups import trial_groups

    first = _group("pause 1", [-5, 3, -2, 4, 0, -1, 2, 1])
    second = _group("pause 2", [-3, 1, 2, -4, 0, 3, -1, 2])
    judged = trial_groups(first + second, {}, format_value)["differences"][0]["figures"]

    assert judged["capacity_change"]["verdict"] == "no meaningful difference"
