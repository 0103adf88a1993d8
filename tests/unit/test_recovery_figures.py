"""The recovery's figures: from the first sample where Ceph reports recovery at work to full
redundancy while the fault persists (Swift: from the restore to full redundancy with every
daemon back), the clients' throughput and p99 against the baseline's; n/a, with the reason,
where it cannot be told."""

import pytest

from loadgen.samples import new_histogram
from service.results.analysis import ClusterPoint, Second, Timeline, analyze
from service.results.figures import recovering

FAULT = 100.0
OUT = 130.0  # the dead OSD marked out: recovery starts
CLEAN = 160.0  # fully redundant (held to the end)


def histogram_of(*values_us):
    h = new_histogram()
    for v in values_us:
        h.record_value(v)
    return h.encode().decode()


def load(recovery_ops=60, recovery_us=8_000):
    """100 ops/s at 1 ms, then `recovery_ops` at `recovery_us` while Ceph recovers."""
    seconds = []
    for t in range(0, 200):
        during = OUT <= t < CLEAN
        ops = recovery_ops if during else 100
        seconds.append(Second(ts=float(t), ops=ops, histograms=(
            histogram_of(*[recovery_us if during else 1_000] * ops),)))
    return seconds


def cluster(recovering_from=OUT, says=True):
    points = []
    for t in map(float, range(90, 200)):
        seen = t >= FAULT + 2
        points.append(ClusterPoint(
            ts=t, fault_seen=seen, fully_redundant=not seen or t >= CLEAN,
            complete=t >= 190, at_risk=seen and t < CLEAN,
            recovering=(recovering_from is not None and recovering_from <= t < CLEAN)
            if says else None,
            degraded=(max(0, int(3000 - 50 * (t - OUT))) if seen and t < CLEAN else 0)
            if says else None))
    return points


def figures(seconds, points):
    return analyze(seconds, points, Timeline(load_start=0.0, fault=FAULT, end=200.0,
                                             restore=185.0, ramp_s=5.0))


def test_the_recovery_runs_from_recovery_at_work_to_full_redundancy():
    result = figures(load(), cluster())

    assert result["time_to_full_redundancy_s"] == CLEAN - FAULT
    assert result["recovery_s"] == CLEAN - OUT
    assert result["recovery_ops_ratio"] == 0.6
    assert result["recovery_p99_ratio"] == pytest.approx(8.0, rel=0.01)  # HDR buckets
    assert result["recovery_objects"] == 3000  # the most degraded while it recovered


def test_no_recovery_seen_and_a_system_that_does_not_say_are_n_a_with_the_reason():
    unseen = figures(load(), cluster(recovering_from=None))
    swift = figures(load(), cluster(says=False))

    assert unseen["recovery_s"] is None
    assert unseen["reasons"]["recovery_ops_ratio"].startswith("no recovery was seen")
    assert swift["recovery_p99_ratio"] is None
    assert swift["recovery_objects"] is None
    # Swift recovers after the restore: here it never became whole again before the end
    assert swift["reasons"]["recovery_s"] == ("not fully redundant with every daemon back "
                                              "before the run ended")


def test_swift_recovers_after_the_restore_and_its_catch_up_is_its_recovery():
    def during(t):
        return 185 <= t < 190  # the replicators push the handoffs home

    seconds = [Second(ts=float(t), ops=50 if during(t) else 100, histograms=(
        histogram_of(*[4_000 if during(t) else 1_000] * (50 if during(t) else 100)),))
        for t in range(0, 215)]
    points = [ClusterPoint(ts=float(t), fault_seen=102 <= t < 185,
                           fully_redundant=not 102 <= t < 190, complete=not 102 <= t < 190,
                           at_risk=None, recovering=None, degraded=None)
              for t in range(90, 215)]
    result = analyze(seconds, points, Timeline(load_start=0.0, fault=FAULT, end=215.0,
                                               restore=185.0, ramp_s=5.0))

    assert result["time_to_full_redundancy_after_restore_s"] == 5.0
    assert result["recovery_s"] == 5.0
    assert result["recovery_ops_ratio"] == 0.5
    assert result["recovery_p99_ratio"] == pytest.approx(4.0, rel=0.01)
    assert result["recovery_objects"] is None
    assert result["reasons"]["recovery_objects"] == ("Swift counts handoff partitions, not "
                                                     "objects to rebuild")


def test_a_recovery_not_finished_while_the_fault_lasted_is_n_a():
    points = [p if p.ts < CLEAN else ClusterPoint(
        ts=p.ts, fault_seen=True, fully_redundant=False, recovering=True)
        for p in cluster()]

    result = figures(load(), points)

    assert result["recovery_s"] is None
    assert result["reasons"]["recovery_s"] == (
        "the cluster did not finish recovering while the fault persisted")


def test_recovery_at_work_is_a_pg_recovering_or_backfilling_or_waiting_to():
    assert recovering({"pgs_by_state": {"active+clean": 30,
                                        "active+recovery_wait+degraded": 3}})
    assert recovering({"pgs_by_state": {"active+remapped+backfilling": 1}})
    assert recovering({"pgs_by_state": {"active+clean": 33,
                                        "active+undersized+degraded": 0}}) is False
    assert recovering({"pgs_by_state": {"active+undersized+degraded": 33}}) is False
    assert recovering({"servers_down": 1}) is None  # a Swift sample
