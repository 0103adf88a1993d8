"""bench/p8_autocorrelation takes a series' autocorrelation as the baseline check does."""

import random

from bench.p8_autocorrelation import detrended_lag1, sen_lag1
from service.results import steady


def test_a_step_that_stayed_is_not_autocorrelation_for_the_check():
    rng = random.Random(3)
    series = [10 + rng.gauss(0, 1) for _ in range(10)] + [30 + rng.gauss(0, 1)
                                                          for _ in range(10)]
    assert sen_lag1(series) > 0.3  # the Sen line alone leaves the step in
    assert abs(detrended_lag1(series)) < 0.3


def test_bursty_seconds_read_as_autocorrelated_either_way():
    rng = random.Random(5)
    series = [steady.ar1(rng, 0.8, 60) for _ in range(50)]
    assert sorted(detrended_lag1(s) for s in series)[25] > 0.4
    assert sorted(sen_lag1(s) for s in series)[25] > 0.4
