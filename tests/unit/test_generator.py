"""The rule that says a calibration's stage measured its load generator (service.results.
generator), on synthetic stages: the client's own queueing at 0.8 slots or more, or its CPU
past 0.8 cores; the sweep ends there and the knee is a lower bound."""

from __future__ import annotations

import pytest

from service.results.capacity import Limits, Stage, generator_bound, stop_reason
from service.results.generator import knee_verdict, why_bound
from service.results.knee import knee_of


def stage(in_flight: int, ops_s: float, p99_ms: float, busy: float | None,
          cpu: float | None = 0.1, repeat: int = 0) -> Stage:
    return Stage(in_flight=in_flight, seconds=10, ops=int(ops_s * 10), ops_s=ops_s, mb_s=0.0,
                 errors=0, p50_ms=p99_ms / 2, p99_ms=p99_ms, generator_cpu_cores=cpu,
                 repeat=repeat, client_busy=busy)


@pytest.mark.parametrize("busy, bound", [(0.79, False), (0.8, True), (0.98, True),
                                         (None, False)])
def test_a_stage_is_generator_bound_when_the_client_holds_at_least_0_8_slots(busy, bound):
    assert generator_bound(stage(2, 93.0, 27.0, busy)) is bound


def test_the_client_s_queueing_marks_a_stage_whose_cpu_was_low():
    slowed = stage(2, 93.0, 26.7, busy=0.98, cpu=0.08)

    assert why_bound(slowed, Limits()) == (
        "the client held 0.98 slots between a completion and the next submit with 2 in "
        "flight (bound 0.80): completions queued behind the generator's own work")


def test_a_busy_cpu_still_marks_a_stage_and_a_stage_from_before_the_share_by_cpu_alone():
    assert why_bound(stage(8, 3000.0, 4.0, busy=0.3, cpu=0.85), Limits()) == (
        "the load generator used 0.85 cores with 8 in flight (bound 0.80)")
    assert why_bound(stage(8, 3000.0, 4.0, busy=None, cpu=0.85), Limits()).startswith(
        "the load generator used 0.85 cores")
    assert why_bound(stage(8, 3000.0, 4.0, busy=None, cpu=0.5), Limits()) is None


def test_the_sweep_ends_at_the_first_stage_whose_client_held_the_slots():
    stages = [stage(1, 57.0, 21.7, busy=0.60), stage(2, 93.0, 26.7, busy=0.98)]

    assert stop_reason(stages[:1]) is None
    assert stop_reason(stages) == (
        "the client held 0.98 slots between a completion and the next submit with 2 in "
        "flight (bound 0.80): completions queued behind the generator's own work: past this "
        "it, not the cluster, would set the throughput")


def test_a_knee_where_the_generator_flattened_is_a_lower_bound_and_one_the_cluster_did_not():
    # the generator's ceiling: throughput flat at ~500 ops/s, latency flat, the client busy
    generator = [stage(1, 300.0, 4.0, 0.45), stage(2, 480.0, 4.2, 0.78),
                 stage(4, 500.0, 8.5, 0.95), stage(2, 470.0, 4.3, 0.82, repeat=1)]
    # the cluster's: throughput flat, latency doubling with the load, the client idle
    cluster = [stage(1, 150.0, 10.0, 0.14), stage(2, 186.0, 20.0, 0.11),
               stage(4, 238.0, 31.0, 0.18), stage(8, 303.0, 47.0, 0.22)]

    for_generator = knee_verdict(list(knee_of(generator).stages), generator, Limits())
    for_cluster = knee_verdict(list(knee_of(cluster).stages), cluster, Limits())

    assert knee_of(generator).in_flight == 2  # its level, whose repeat was bound
    assert for_generator["lower_bound"] is True
    assert for_generator["why"].startswith("the client held 0.82 slots ")
    assert for_generator["stages"][3] == {"in_flight": 2, "repeat": 1, "client_busy": 0.82}
    assert (for_generator["client_busy_bound"], for_generator["cpu_cores_bound"]) == (0.8, 0.8)
    assert for_cluster["lower_bound"] is False and for_cluster["why"] is None
