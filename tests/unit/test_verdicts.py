"""What a trial says of a figure (measured, never reached, no disruption, not measured) and
the verdicts those make (service.results.verdicts)."""

from __future__ import annotations

import pytest

from service.results.verdicts import OUTCOMES, Observed, compare_groups, observe

NEVER_RECOVERED = ("throughput never stayed within 5% of the baseline with zero errors for "
                   "10 s and until the end of the fault window before the load ended")


def measured(*values: float) -> list[Observed]:
    return [Observed("measured", float(v)) for v in values]


@pytest.mark.parametrize(("key", "reason", "kind", "bound"), [
    ("time_to_client_recovery_s", NEVER_RECOVERED, "never", 150.0),
    ("time_to_detect_s", "the cluster never reported the fault", "never", 150.0),
    ("time_to_full_redundancy_s", "not fully redundant again while the fault persisted",
     "never", 60.0),  # watched until the restore
    ("time_to_full_redundancy_after_restore_s",
     "not fully redundant with every daemon back before the run ended", "never", 90.0),
    ("time_to_alert_s", "no alert about lab-ceph reached the service between the fault and "
                        "the end of the run", "never", 150.0),
    ("time_to_client_recovery_s", "the clients saw no disruption", "no disruption", None),
    ("time_to_client_recovery_s", "no baseline", "missing", None),
    ("time_to_full_redundancy_after_restore_s", "the fault was not restored during the run",
     "missing", None),
    ("errors", None, "missing", None),
])
def test_a_figure_never_reached_is_censored_at_what_the_run_watched(key, reason, kind, bound):
    entry = {key: None, "reasons": {key: reason} if reason else {}, "observed_s": 150.0,
             "restore_at_s": 60.0}

    seen = observe(key, entry)

    assert (seen.kind, seen.bound) == (kind, bound)


def test_a_measured_zero_is_a_value_and_settings_are_no_outcome():
    assert observe("time_to_client_recovery_s", {"time_to_client_recovery_s": 0.0}) == \
        Observed("measured", 0.0)
    assert not {"baseline_ops", "restore_at_s", "baseline_p99_ms", "throughput_drop"} & \
        set(OUTCOMES)
    assert {"fault_p99_ms", "deficit_ops", "deficit_s", "worst_second_drop"} <= set(OUTCOMES)


def test_more_trials_that_never_recovered_is_a_finding_of_its_own():
    never = [Observed("never", bound=120.0)] * 6
    said = compare_groups({"time_to_client_recovery_s": (measured(30, 31, 32, 33, 34, 35),
                                                         never)}, ("ceph", "swift"))
    f = said["figures"]["time_to_client_recovery_s"]

    assert said["tests"] == 2  # the ranks, and how many never recovered (Fisher)
    assert f["verdict"] == "different"
    assert "how many trials never recovered differs, p 0.00433 after Holm" in f["text"]
    assert "swift: 0 of 6 measured, 6 of 6 never recovered (> 120.0 s)" in f["text"]


def test_no_disruption_is_its_own_outcome_not_0_s():
    calm = [Observed("no disruption", reason="no disruption")] * 6
    said = compare_groups({"time_to_client_recovery_s": (measured(30, 31, 32, 33, 34, 35),
                                                         calm)}, ("ceph", "swift"))
    f = said["figures"]["time_to_client_recovery_s"]

    assert f["p"] is None  # no time to rank on one side
    assert f["verdict"] == "different"
    assert "how many trials saw no disruption differs" in f["text"]
    assert "6 of 6 with no disruption" in f["text"]


def test_two_trials_a_side_can_never_be_different():
    said = compare_groups({"time_to_detect_s": (measured(1, 1.1), measured(50, 60))},
                          ("a", "b"))

    f = said["figures"]["time_to_detect_s"]
    assert (f["verdict"], f["p"]) == ("cannot tell", pytest.approx(1 / 3))
    assert f["needed_per_side"] == 4


def test_an_interval_inside_the_margin_is_no_meaningful_difference_and_wider_cannot_tell():
    close = compare_groups({"time_to_detect_s": (measured(1.0, 1.1, 1.2, 1.05, 1.15),
                                                 measured(1.1, 1.0, 1.2, 1.12, 1.08))},
                           ("a", "b"))["figures"]["time_to_detect_s"]
    wide = compare_groups({"time_to_detect_s": (measured(1, 3, 5, 2, 4),
                                                measured(2, 4, 1, 5, 3.5))},
                          ("a", "b"))["figures"]["time_to_detect_s"]

    assert close["verdict"] == "no meaningful difference"
    assert "inside the margin of 1.000 s" in close["text"]
    assert wide["verdict"] == "cannot tell"
    assert "wider than the margin allows" in wide["text"]
    assert wide["needed_per_side"] > 5


def test_holm_keeps_a_figure_that_one_test_alone_would_call_different_from_being_so():
    # p = 2/70 = 2.9% on each of four figures: alone each would pass 5%, together none does
    apart = (measured(10, 20, 30, 40), measured(50, 60, 70, 80))  # 10 to 70 apart
    said = compare_groups({k: apart for k in ("errors", "time_to_detect_s", "data_at_risk_s",
                                              "time_to_alert_s")}, ("a", "b"))

    assert said["tests"] == 4
    assert {f["verdict"] for f in said["figures"].values()} == {"cannot tell"}
    assert said["figures"]["errors"]["p_holm"] == pytest.approx(4 * 2 / 70, abs=1e-6)


def test_a_figure_alike_on_every_trial_takes_no_place_in_holms_count():
    zeros = (measured(0, 0, 0, 0, 0), measured(0, 0, 0, 0, 0))
    never = ([Observed("never", bound=60.0)] * 5, [Observed("never", bound=60.0)] * 5)
    said = compare_groups({"lost_objects": zeros, "time_to_full_redundancy_s": never,
                           "time_to_detect_s": (measured(1, 2, 3, 4, 5),
                                                measured(6, 7, 8, 9, 10))}, ("a", "b"))

    assert said["tests"] == 1  # only time to detect can reject
    assert said["figures"]["time_to_detect_s"]["verdict"] == "different"
    assert said["figures"]["lost_objects"]["verdict"] == "no meaningful difference"
    assert said["figures"]["time_to_full_redundancy_s"]["verdict"] == "cannot tell"
