"""The knee read from repeated stages (service.results.knee): which levels are measured
again, in what order, and the rule that picks the knee among noisy stages."""

from __future__ import annotations

import random

import pytest

from service.results.capacity import Limits, Settings, Stage
from service.results.knee import knee_of, repeat_levels, schedule
from service.runs.calibration import knee_bound_ms, max_stages
from service.store.models import Calibration, CalibrationStage


def stage(in_flight: int, ops_s: float, p99_ms: float = 5.0, repeat: int = 0,
          errors: int = 0) -> Stage:
    return Stage(in_flight=in_flight, seconds=5, ops=int(ops_s * 5), ops_s=ops_s,
                 mb_s=ops_s * 4096 / 1e6, errors=errors, p50_ms=p99_ms and p99_ms / 2,
                 p99_ms=p99_ms, repeat=repeat)


FIRST_PASS = [stage(1, 100, 4), stage(2, 190, 5), stage(4, 350, 8), stage(8, 420, 12),
              stage(16, 405, 18)]


def test_the_levels_measured_again_are_the_first_knee_and_its_neighbours():
    assert repeat_levels(FIRST_PASS) == [4, 8, 16]
    # the knee at the end of the sweep has no level above it
    assert repeat_levels(FIRST_PASS[:4]) == [4, 8]
    # a neighbour whose p99 is past the factor, or with errors, is not measured again
    assert repeat_levels(FIRST_PASS[:4] + [stage(16, 400, 40)], Limits(p99_factor=5)) == [4, 8]
    assert repeat_levels(FIRST_PASS[:3] + [stage(8, 420, 12), stage(16, 405, 18, errors=2)]
                         ) == [4, 8]
    assert repeat_levels([stage(1, 0, None, errors=5)]) == []


def test_repeats_go_in_turns_over_the_levels():
    assert schedule([4, 8, 16], 2) == [(4, 1), (8, 1), (16, 1), (4, 2), (8, 2), (16, 2)]
    assert schedule([4, 8], 0) == []


def test_the_knee_is_the_lowest_level_whose_median_reaches_the_best_levels_lowest_stage():
    # 8 is best by median (430) and its stages spread 395-440; 4's median 400 reaches 395:
    # within the noise of the best, so 4 in flight is the knee, at its median
    stages = FIRST_PASS + [stage(4, 400, 8, 1), stage(8, 440, 12, 1), stage(16, 410, 18, 1),
                           stage(4, 410, 8, 2), stage(8, 395, 12, 2), stage(16, 402, 18, 2)]
    knee = knee_of(stages)

    assert (knee.in_flight, knee.best_in_flight, knee.threshold_ops) == (4, 8, 395)
    assert (knee.ops_s, knee.low, knee.high) == (400, 350, 410)
    assert [level.in_flight for level in knee.levels] == [4, 8, 16]
    assert knee.spread(2)["levels"][1] == {"in_flight": 8, "ops_s": [420, 440, 395],
                                           "min": 395, "median": 420, "max": 440}


def test_a_level_below_the_noise_of_the_best_is_not_the_knee():
    # 8's stages are tight (418-425): 4's median 400 is below 418, so 8 is the knee
    stages = FIRST_PASS + [stage(4, 400, 8, 1), stage(8, 425, 12, 1), stage(16, 410, 18, 1),
                           stage(4, 390, 8, 2), stage(8, 418, 12, 2), stage(16, 402, 18, 2)]
    knee = knee_of(stages)

    assert (knee.in_flight, knee.ops_s, knee.low, knee.high) == (8, 420, 418, 425)


def test_one_lucky_stage_no_longer_sets_the_capacity():
    # the first pass's 520 at 8 was a lucky stage: the capacity is a median, not it
    stages = [stage(1, 100, 4), stage(2, 190, 5), stage(4, 400, 8), stage(8, 520, 12),
              stage(16, 405, 18),
              stage(4, 405, 8, 1), stage(8, 410, 12, 1), stage(16, 400, 18, 1),
              stage(4, 398, 8, 2), stage(8, 402, 12, 2), stage(16, 408, 18, 2)]
    knee = knee_of(stages)

    # 8 is still the best (median 410) but its own stages say 402-520; 4's median 400 is
    # below that, 16 is above 8: the knee stays at 8, at its median
    assert (knee.in_flight, knee.ops_s, knee.low, knee.high) == (8, 410, 402, 520)


def test_a_level_with_an_error_in_any_repeat_is_never_the_knee():
    stages = FIRST_PASS + [stage(4, 400, 8, 1), stage(8, 440, 12, 1, errors=1),
                           stage(4, 410, 8, 2), stage(8, 395, 12, 2)]

    assert knee_of(stages).in_flight == 4
    assert knee_of([stage(1, 0, None, errors=5)]) is None


def test_without_repeats_the_knee_is_the_stage_of_most_throughput():
    knee = knee_of(FIRST_PASS)

    assert (knee.in_flight, knee.ops_s, knee.low, knee.high) == (8, 420, 420, 420)
    assert knee.spread(0)["stages"] == 1


def test_the_knee_depends_on_the_stages_not_on_their_order():
    stages = FIRST_PASS + [stage(4, 400, 8, 1), stage(8, 440, 12, 1), stage(16, 410, 18, 1),
                           stage(4, 410, 8, 2), stage(8, 395, 12, 2), stage(16, 402, 18, 2)]
    expected = knee_of(stages)
    shuffled = FIRST_PASS[:1] + random.Random(7).sample(stages[1:], len(stages) - 1)

    assert knee_of(shuffled).in_flight == expected.in_flight
    assert knee_of(shuffled).ops_s == expected.ops_s


def test_a_calibration_runs_at_most_the_first_pass_and_three_levels_of_repeats():
    assert max_stages(Settings(max_in_flight=16, repeats=2)) == 5 + 6
    assert max_stages(Settings(max_in_flight=64)) == 7 + 6
    assert max_stages(Settings(max_in_flight=16, repeats=0)) == 5


def test_one_slow_repeat_does_not_disqualify_its_level():
    # make demo on the Swift lab: the bound was 5 x 48 ms; the levels above 1 in flight
    # were past it, and one repeat at 1 in flight met a 262 ms p99: no knee, no run
    stages = [stage(1, 62.6, 48.1), stage(2, 21.4, 327.9), stage(4, 47.4, 366.3),
              stage(1, 37.2, 112.3, repeat=1), stage(1, 21.0, 262.4, repeat=2)]
    found = knee_of(stages, Limits(p99_factor=5))

    assert found is not None and found.in_flight == 1 and found.ops_s == 37.2
    # a level most of whose stages are past the bound still does not qualify
    assert knee_of(stages + [stage(1, 30.0, 300.0, repeat=3), stage(1, 30.0, 300.0, repeat=4)],
                   Limits(p99_factor=5)) is None


def test_a_runs_knee_bound_is_its_calibrations_first_pass_bound():
    def stage(in_flight, repeat, p99):
        return CalibrationStage(in_flight=in_flight, repeat=repeat, p99_ms=p99, errors=0)

    # calibration 6 of bench P8 (Ceph, 4 KiB): the bound is 5 x the first stage's p99
    row = Calibration(settings={"p99_factor": 5.0}, stages=[
        stage(16, 1, 65.3), stage(2, 0, 22.8), stage(1, 0, 14.487), stage(8, 2, 48.4)])
    assert knee_bound_ms(row) == pytest.approx(72.435)
    assert knee_bound_ms(Calibration(settings={}, stages=[])) is None
