"""The figures of a run (DESIGN.md "What a run measures") from synthetic series with known answers.

The scenario: load from t=0 at 100 ops/s, fault at t=100, zero throughput (and
timeouts) for 3 s, then back at baseline. The cluster notices at t=102, is
fully redundant again (while the fault persists) from t=120, the fault is
restored at t=130 and every daemon is back from t=133. The run ends at t=160.
"""

from dataclasses import replace

import pytest

from loadgen.samples import new_histogram
from service.results.analysis import ClusterPoint, Second, Timeline, analyze

BASE = 100
FAULT = 100.0
END = 160.0


def histogram_of(*values_us):
    h = new_histogram()
    for v in values_us:
        h.record_value(v)
    return h.encode().decode()


def load(ops_at=None, errors_at=None, start=0, end=int(END), skip=()):
    """One Second per second; ops default to BASE except during the 3 s dip."""
    ops_at = {100: 0, 101: 0, 102: 0} if ops_at is None else ops_at
    errors_at = {100: {"timeout": 20}, 101: {"timeout": 20}, 102: {"timeout": 5, "EIO": 1}} \
        if errors_at is None else errors_at
    seconds = []
    for t in range(start, end):
        if t in skip:
            continue
        by_class = errors_at.get(t, {})
        seconds.append(Second(ts=float(t), ops=ops_at.get(t, BASE), bytes=BASE * 4096,
                              errors=sum(by_class.values()), errors_by_class=by_class))
    return seconds


def cluster(detect=102.0, redundant_from=120.0, complete_from=133.0, at_risk=(103.0, 115.0),
            flapping=(), start=90, end=int(END)):
    """One ClusterPoint per second."""
    points = []
    for t in map(float, range(start, end)):
        seen = detect is not None and t >= detect
        redundant = not seen or (redundant_from is not None and t >= redundant_from) \
            or t in flapping
        complete = not seen or (complete_from is not None and t >= complete_from)
        risky = at_risk is not None and at_risk[0] <= t < at_risk[1]
        points.append(ClusterPoint(ts=t, fault_seen=seen, fully_redundant=redundant,
                                   complete=complete, at_risk=risky))
    return points


def timeline(fault=FAULT, restore=130.0, ramp_s=0.0, load_start=0.0, end=END):
    return Timeline(load_start=load_start, fault=fault, end=end, restore=restore, ramp_s=ramp_s)


def figures(seconds=None, points=None, tl=None, verify=None):
    return analyze(load() if seconds is None else seconds,
                   cluster() if points is None else points,
                   timeline() if tl is None else tl, verify)


# baseline ---------------------------------------------------------------------------------


def test_baseline_is_the_mean_throughput_before_the_fault():
    result = figures()

    assert result["baseline_ops"] == 100.0
    assert result["baseline_seconds"] == 100
    assert result["baseline_mbps"] == pytest.approx(0.4096)


def test_baseline_excludes_the_ramp_up():
    seconds = load(ops_at={t: 10 for t in range(10)} | {100: 0, 101: 0, 102: 0})

    result = figures(seconds, tl=timeline(ramp_s=10.0))

    assert result["baseline_ops"] == 100.0
    assert result["baseline_seconds"] == 90


def test_baseline_excludes_the_second_in_which_the_fault_was_injected():
    seconds = load(ops_at={100: 0, 101: 0, 102: 0})

    result = figures(seconds, tl=timeline(fault=100.5))

    assert result["baseline_seconds"] == 100
    assert result["baseline_ops"] == 100.0


def test_baseline_latency_is_the_exact_percentile_of_all_baseline_operations():
    fast, slow = histogram_of(*[1000] * 98), histogram_of(2000, 2000)
    seconds = [Second(ts=float(t), ops=100, histograms=(fast, slow)) for t in range(100)]

    result = figures(seconds)

    assert result["baseline_p50_ms"] == 1.0
    assert result["baseline_p99_ms"] == 2.0


def test_fault_latency_is_the_p99_of_the_operations_in_the_fault_window_only():
    fast, slow = histogram_of(*[1000] * 100), histogram_of(*[50_000] * 5)
    seconds = [Second(ts=float(t), ops=100, histograms=(fast,) + ((slow,) if t >= FAULT
                                                                  else ()))
               for t in range(int(END))]

    result = figures(seconds)

    assert result["baseline_p99_ms"] == 1.0
    assert result["fault_p99_ms"] == pytest.approx(50.0, rel=1e-3)  # HDR precision


def test_no_baseline_when_no_complete_second_precedes_the_fault():
    result = figures(tl=timeline(ramp_s=100.0))

    assert result["baseline_ops"] is None
    assert result["reasons"]["baseline_ops"] == \
        "no complete second of load between the ramp-up and the fault"
    assert result["throughput_drop"] is None
    assert result["reasons"]["throughput_drop"] == "no baseline"
    assert result["time_to_client_recovery_s"] is None
    assert result["reasons"]["time_to_client_recovery_s"] == "no baseline"


# errors -----------------------------------------------------------------------------------


def test_errors_count_every_failed_operation_from_the_fault_on_by_class():
    seconds = load(errors_at={50: {"timeout": 7},  # before the fault: not counted
                              100: {"timeout": 20}, 101: {"timeout": 20},
                              102: {"timeout": 5, "EIO": 1}, 150: {"ENOENT": 2}})

    result = figures(seconds)

    assert result["errors"] == 48
    assert result["errors_by_class"] == {"timeout": 45, "EIO": 1, "ENOENT": 2}


def test_errors_are_also_counted_by_operation():
    seconds = [Second(ts=float(t), ops=BASE) for t in range(100)]
    seconds += [Second(ts=100.0, ops=50, errors=7, errors_by_class={"timeout": 7},
                       errors_by_op={"read": 5, "write": 2}),
                Second(ts=101.0, ops=90, errors=1, errors_by_class={"timeout": 1},
                       errors_by_op={"delete": 1})]

    result = figures(seconds)

    assert result["errors_by_op"] == {"read": 5, "write": 2, "delete": 1}


# missed starts ----------------------------------------------------------------------------


def with_missed(seconds, missed_at):
    """The seconds, with {t: {op: n}} starts the open loop could not issue."""
    return [replace(s, missed=sum(missed_at.get(int(s.ts), {}).values()),
                    missed_by_op=missed_at.get(int(s.ts), {})) for s in seconds]


def test_missed_starts_are_errors_of_class_not_started_by_operation():
    seconds = with_missed(load(), {100: {"read": 30, "write": 10}, 101: {"read": 5}})

    result = figures(seconds)

    assert result["errors"] == 46 + 45
    assert result["errors_by_class"] == {"timeout": 45, "EIO": 1, "not started": 45}
    assert result["errors_by_op"] == {"read": 35, "write": 10}


def test_missed_starts_before_the_fault_are_not_errors_of_the_fault():
    seconds = with_missed(load(), {50: {"read": 7}})

    assert "not started" not in figures(seconds)["errors_by_class"]


def test_a_second_with_missed_starts_breaks_the_recovery_hold():
    # full throughput, no failed operation, but 3 starts could not be issued at 108
    seconds = with_missed(load(), {108: {"write": 3}})

    assert figures(seconds)["time_to_client_recovery_s"] == 9.0


# deficit ----------------------------------------------------------------------------------

FAST_US, LATE_US = 5_000, 1_500_000


def timed_load(ops_at, late_at=None, missed_at=None):
    """One Second per second with latency histograms: every operation FAST_US except
    late_at[t] of them LATE_US (late by more than the 1 s of "on time")."""
    late_at = late_at or {}
    seconds = []
    for t in range(0, int(END)):
        ops = ops_at.get(t, BASE)
        late = late_at.get(t, 0)
        seconds.append(Second(ts=float(t), ops=ops, histograms=(
            histogram_of(*[FAST_US] * (ops - late), *[LATE_US] * late),)))
    return with_missed(seconds, missed_at or {})


def test_a_catch_up_burst_after_a_stall_does_not_cancel_the_deficit():
    # a 2 s stall from 100: the 200 stalled operations complete at 102 with the second's own
    # 100; those meant for 100..101 waited more than 1 s. The mean over the window 100..119
    # is the baseline again: the burst washed the mean drop out.
    seconds = timed_load({100: 0, 101: 0, 102: 300}, late_at={102: 100})

    result = figures(seconds)

    assert result["throughput_drop"] == 0.0
    assert result["offered_ops"] == 2000
    assert (result["deficit_ops"], result["deficit_s"]) == (100, 1.0)


def test_missed_starts_are_part_of_the_deficit():
    # half the starts of 100..101 could not be issued; the others were served on time
    seconds = timed_load({100: 50, 101: 50}, missed_at={100: {"read": 50}, 101: {"read": 50}})

    result = figures(seconds)

    assert (result["deficit_ops"], result["deficit_s"]) == (100, 1.0)
    assert result["errors_by_class"] == {"not started": 100}


def test_operations_counted_in_the_next_second_are_no_deficit():
    # at 100 ops/s, a few completions cross each boundary: 97, 103, 97, 103 ... in the window
    seconds = timed_load({t: 97 if t % 2 else 103 for t in range(100, 120)})

    result = figures(seconds)

    assert result["deficit_ops"] == 0
    assert result["deficit_s"] == 0.0


def test_an_operation_within_1_s_of_its_intended_start_is_on_time():
    seconds = timed_load({}, late_at={})
    slow = [replace(s, histograms=(histogram_of(*[999_000] * BASE),)) if 100 <= s.ts < 110
            else s for s in seconds]

    assert figures(slow)["deficit_ops"] == 0


def test_the_deficit_is_not_measured_when_latencies_were_not_recorded():
    result = figures(load())  # seconds of operations without a latency histogram

    assert result["deficit_ops"] is None and result["deficit_s"] is None
    assert result["reasons"]["deficit_s"] == (
        "the latency of some operations of the fault window was not recorded")


def test_the_deficit_needs_a_baseline():
    seconds = timed_load({t: 0 for t in range(100)})

    result = figures(seconds)

    assert result["deficit_ops"] is None
    assert result["reasons"]["deficit_ops"] == "no baseline"


# throughput drop --------------------------------------------------------------------------


def test_throughput_drop_is_over_the_fault_window_up_to_full_redundancy():
    result = figures()

    # window 100..119: 3 s at 0, 17 s at 100 -> mean 85
    assert result["fault_window_s"] == 20.0
    assert result["throughput_drop"] == 0.15


def test_worst_second_drop_is_1_when_throughput_reaches_zero():
    assert figures()["worst_second_drop"] == 1.0


def test_fault_window_runs_to_the_end_when_the_cluster_never_recovers():
    result = figures(points=cluster(redundant_from=None, complete_from=None))

    # window 100..159: 3 s at 0 out of 60
    assert result["fault_window_s"] == 60.0
    assert result["throughput_drop"] == 0.05


def test_drop_fractions_are_clamped_at_zero_when_throughput_rises():
    seconds = load(ops_at={t: 150 for t in range(100, 160)}, errors_at={})

    result = figures(seconds)

    assert result["throughput_drop"] == 0.0
    assert result["worst_second_drop"] == 0.0


# time to detect ---------------------------------------------------------------------------


def test_time_to_detect_is_the_first_cluster_report_of_the_fault():
    assert figures()["time_to_detect_s"] == 2.0


def test_a_fault_reported_before_the_injection_is_not_a_detection():
    points = [ClusterPoint(ts=95.0, fault_seen=True, fully_redundant=False)] + \
        [p for p in cluster() if p.ts != 95.0]

    assert figures(points=points)["time_to_detect_s"] == 2.0


def test_never_detected_is_none_with_a_reason():
    result = figures(points=cluster(detect=None))

    assert result["time_to_detect_s"] is None
    assert result["reasons"]["time_to_detect_s"] == "the cluster never reported the fault"
    assert result["time_to_full_redundancy_s"] is None
    assert result["reasons"]["time_to_full_redundancy_s"] == \
        "the cluster never reported the fault"


# time to client recovery ------------------------------------------------------------------


def test_client_recovery_is_the_start_of_10_good_seconds():
    assert figures()["time_to_client_recovery_s"] == 3.0


def test_a_second_exactly_5_percent_below_baseline_is_good():
    seconds = load(ops_at={100: 0, 101: 0, 102: 0} | {t: 95 for t in range(103, 160)})

    assert figures(seconds)["time_to_client_recovery_s"] == 3.0


def test_seconds_more_than_5_percent_below_baseline_are_not_good():
    seconds = load(ops_at={100: 0, 101: 0, 102: 0, 110: 94, 111: 94})

    assert figures(seconds)["time_to_client_recovery_s"] == 12.0


def test_a_stall_followed_by_its_burst_of_late_completions_is_not_jitter():
    # 0 then 200: the stalled operations all completed in the next second
    seconds = load(ops_at={100: 0, 101: 0, 102: 0, 110: 0, 111: 200})

    assert figures(seconds)["time_to_client_recovery_s"] == 12.0


def test_a_second_pairs_with_one_neighbour_only():
    # 106 can make up for one of the 94s, not for both
    seconds = load(ops_at={100: 0, 101: 0, 102: 0, 110: 94, 111: 106, 112: 94})

    assert figures(seconds)["time_to_client_recovery_s"] == 13.0


def test_an_op_counted_in_the_next_second_is_jitter_not_a_drop():
    # at 100 ops/s, 93 then 107: seven operations completed just after the boundary
    seconds = load(ops_at={100: 0, 101: 0, 102: 0, 110: 93, 111: 107})

    assert figures(seconds)["time_to_client_recovery_s"] == 3.0


def test_at_a_low_rate_one_operation_either_way_is_within_the_band():
    # 6 ops/s (Swift at 10% of its capacity): a second can only be 5, 6 or 7; 5% would be
    # 0.3 of an operation, and the clients would never recover
    base = {t: 6 for t in range(0, int(END))}
    jitter = {t: (5, 6, 7)[t % 3] for t in range(103, int(END))}
    seconds = [replace(s, bytes=6 * 4096) for s in
               load(ops_at=base | {100: 0, 101: 0, 102: 0} | jitter, errors_at={})]

    assert figures(seconds)["time_to_client_recovery_s"] == 3.0
    # two seconds of 4 in a row are a dip, not jitter
    dipped = [replace(s, ops=4) if s.ts in (110.0, 111.0) else s for s in seconds]
    assert figures(dipped)["time_to_client_recovery_s"] == 12.0


def test_a_second_with_an_error_breaks_the_recovery_hold():
    seconds = load(errors_at={100: {"timeout": 1}, 108: {"timeout": 1}})

    assert figures(seconds)["time_to_client_recovery_s"] == 9.0


def test_a_gap_in_the_samples_is_not_a_good_second():
    seconds = load(skip={105})

    assert figures(seconds)["time_to_client_recovery_s"] == 6.0


def test_a_second_stall_before_full_redundancy_postpones_the_recovery():
    # Ceph marks the dead OSD out ~30 s after the kill: clients stall again
    seconds = load(ops_at={100: 0, 101: 0, 102: 0, 115: 30})

    assert figures(seconds)["time_to_client_recovery_s"] == 16.0


def test_clients_that_never_dipped_had_no_disruption_not_an_instant_recovery():
    result = figures(load(ops_at={}, errors_at={}))

    assert result["time_to_client_recovery_s"] is None
    assert result["reasons"]["time_to_client_recovery_s"] == (
        "no disruption: the clients never dipped below 95% of the baseline throughput and had "
        "no error and no missed start, from the fault to the end of the fault window")
    assert result["client_disruption"] is False


def test_one_error_in_the_faults_own_second_is_a_disruption():
    result = figures(load(ops_at={}, errors_at={100: {"timeout": 1}}))

    assert result["time_to_client_recovery_s"] == 1.0
    assert result["client_disruption"] is True


def test_clients_that_never_recovered_had_a_disruption():
    result = figures(load(end=105), tl=timeline(end=105.0))

    assert result["time_to_client_recovery_s"] is None
    assert result["client_disruption"] is True


def test_nine_good_seconds_before_the_end_are_not_a_recovery():
    seconds = load(end=112)  # good seconds 103..111

    result = figures(seconds, points=cluster(redundant_from=105.0), tl=timeline(end=112.0))

    assert result["time_to_client_recovery_s"] is None
    assert result["reasons"]["time_to_client_recovery_s"] == (
        "throughput never stayed within 5% of the baseline with zero errors "
        "for 10 s and until the end of the fault window before the load ended")


def test_ten_good_seconds_before_the_end_are_a_recovery():
    seconds = load(end=113)  # good seconds 103..112

    result = figures(seconds, points=cluster(redundant_from=105.0), tl=timeline(end=113.0))

    assert result["time_to_client_recovery_s"] == 3.0


# time to full redundancy ------------------------------------------------------------------


def test_full_redundancy_while_the_fault_persists_counts_from_the_fault():
    assert figures()["time_to_full_redundancy_s"] == 20.0


def test_full_redundancy_must_hold_for_ten_seconds():
    # clean on 110..112 only (seen on the lab: an OSD boots, 3 clean polls, then peering)
    result = figures(points=cluster(flapping=(110.0, 111.0, 112.0)))

    assert result["time_to_full_redundancy_s"] == 20.0


def test_redundancy_reported_before_the_detection_does_not_count():
    # the cluster still says HEALTH_OK on 100, 101, 102 (3 polls): it does not know yet
    result = figures(points=cluster(detect=103.0))

    assert result["time_to_full_redundancy_s"] == 20.0


def test_redundancy_reached_only_after_the_restore_is_not_self_healing():
    result = figures(points=cluster(redundant_from=133.0))

    assert result["time_to_full_redundancy_s"] is None
    assert result["reasons"]["time_to_full_redundancy_s"] == \
        "not fully redundant again while the fault persisted"


def test_full_redundancy_after_restore_needs_every_daemon_back():
    # fully redundant from 120 (data re-replicated), but the OSD is back only from 140
    result = figures(points=cluster(complete_from=140.0))

    assert result["time_to_full_redundancy_after_restore_s"] == 10.0
    assert result["restore_at_s"] == 30.0


def test_full_redundancy_after_restore_counts_from_the_restore():
    assert figures()["time_to_full_redundancy_after_restore_s"] == 3.0


def test_full_redundancy_after_restore_is_none_without_a_restore():
    result = figures(tl=timeline(restore=None))

    assert result["time_to_full_redundancy_after_restore_s"] is None
    assert result["reasons"]["time_to_full_redundancy_after_restore_s"] == \
        "the fault was not restored during the run"
    assert result["restore_at_s"] is None


def test_full_redundancy_not_held_until_the_end_is_not_counted():
    # complete again only 5 s before the run ends: not yet shown to hold
    result = figures(points=cluster(complete_from=155.0))

    assert result["time_to_full_redundancy_after_restore_s"] is None


def test_full_redundancy_after_restore_is_none_if_never_complete_again():
    result = figures(points=cluster(complete_from=None))

    assert result["time_to_full_redundancy_after_restore_s"] is None
    assert result["reasons"]["time_to_full_redundancy_after_restore_s"] == \
        "not fully redundant with every daemon back before the run ended"


def test_a_timeline_relative_to_the_fault_can_recover_at_zero():
    # Regression: a first stable point at ts == 0.0 was taken as "never".
    points = [ClusterPoint(ts=float(t), fault_seen=True, fully_redundant=True, complete=True)
              for t in range(0, 15)]
    seconds = [Second(ts=float(t), ops=BASE) for t in range(-20, 20)]
    tl = Timeline(load_start=-20.0, fault=0.0, end=20.0, restore=None)

    result = analyze(seconds, points, tl)

    assert result["time_to_full_redundancy_s"] == 0.0
    assert result["throughput_drop"] is None  # an empty window, not the whole run
    assert result["reasons"]["throughput_drop"] == "no load during the fault window"


# data at risk -----------------------------------------------------------------------------


def test_data_at_risk_is_the_time_the_cluster_reported_degraded_data():
    assert figures()["data_at_risk_s"] == 12.0


def test_data_at_risk_before_the_fault_is_not_counted():
    assert figures(points=cluster(at_risk=(95.0, 105.0)))["data_at_risk_s"] == 5.0


@pytest.mark.parametrize("points", [[], cluster(end=int(FAULT))], ids=["none", "before"])
def test_data_at_risk_is_unknown_without_a_cluster_sample_after_the_fault(points):
    result = figures(points=points)

    assert result["data_at_risk_s"] is None
    assert result["reasons"]["data_at_risk_s"] == ("no sample of the cluster was recorded after "
                                                   "the fault")


def test_data_still_at_risk_at_the_last_point_counts_to_the_end_of_the_run():
    points = cluster(at_risk=(150.0, 200.0), end=155)  # last point 154, run ends at 160

    assert figures(points=points)["data_at_risk_s"] == 10.0


# unmeasurable -----------------------------------------------------------------------------


def test_without_a_fault_every_fault_figure_is_none_with_a_reason():
    result = figures(tl=timeline(fault=None, restore=None))

    for key in ("errors", "deficit_ops", "deficit_s", "throughput_drop", "worst_second_drop",
                "time_to_detect_s", "time_to_client_recovery_s", "time_to_full_redundancy_s",
                "time_to_full_redundancy_after_restore_s", "data_at_risk_s"):
        assert result[key] is None, key
        assert result["reasons"][key] == "no fault was injected", key
    assert result["errors_by_class"] == {}
    assert result["baseline_ops"] is not None


def test_without_a_verify_phase_lost_objects_are_none_with_a_reason():
    result = figures()

    assert result["lost_objects"] is None
    assert result["corrupt_objects"] is None
    assert result["reasons"]["lost_objects"] == "no verify phase ran"


def test_verify_results_become_lost_and_corrupt_objects():
    result = figures(verify={"checked": 500, "lost_objects": 2, "corrupt_objects": 1})

    assert (result["lost_objects"], result["corrupt_objects"], result["verified_objects"]) == \
        (2, 1, 500)


def test_objects_that_could_not_be_read_back_leave_lost_objects_unknown():
    result = figures(verify={"checked": 10, "lost_objects": 0, "corrupt_objects": 0,
                             "unreadable_objects": 2})

    assert result["lost_objects"] is None and result["unreadable_objects"] == 2
    assert result["reasons"]["lost_objects"].startswith(
        "2 acknowledged objects could not be read back")
