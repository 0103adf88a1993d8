"""The Swift observer's slow round (handoff listing, then dispersion report) and the run's
wait for one that began after the experiment ended: the pause is cut short, a round already
begun before does not count, and a round that does not finish is a False after the bound.
The admin is a stand-in for SwiftAdmin's calls; the lab tests use the real one."""

from __future__ import annotations

import logging
import threading
import time

import pytest

from clusters.exceptions import ClusterError
from service.runs import sampler as sampler_module


class SlowAdmin:
    """SwiftAdmin's calls the slow loop makes; each report waits for `release`."""

    def __init__(self, cluster, timeout):
        self.listings: list[float] = []
        self.release = threading.Event()
        self.release.set()

    def ring_facts(self):
        return {}

    def ring_stamp(self):
        return ("rings",)

    def handoffs(self):
        self.listings.append(time.monotonic())
        return {"object": 0}

    def dispersion(self, timeout_s):
        if not self.release.wait(timeout_s):
            raise AssertionError("not released")
        return None

    def cancel(self):
        self.release.set()

    def close(self):
        pass


@pytest.fixture
def source(monkeypatch):
    monkeypatch.setattr(sampler_module, "SwiftAdmin", SlowAdmin)
    made = sampler_module.SwiftSource(cluster=None)
    made.DISPERSION_PAUSE_S = made.DISPERSION_MAX_PAUSE_S = 30.0  # a long pause to cut
    made.connect()
    yield made
    made.close()


def _first_round_begun(source) -> None:
    """Wait until the slow loop's first round has listed, and a little more."""
    deadline = time.monotonic() + 5
    while not source._admin.listings and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.1)


def test_a_round_begun_after_the_moment_is_waited_for_and_the_pause_cut_short(source):
    _first_round_begun(source)  # and over: the loop sleeps its 30 s pause
    since = time.monotonic()

    began = time.monotonic()
    assert source.observed_since(since, timeout_s=5)
    assert time.monotonic() - began < 2  # not the 30 s pause
    assert len(source._admin.listings) == 2 and source._admin.listings[1] >= since
    # asked again for the same moment: that round is there, no new one
    assert source.observed_since(since, timeout_s=5)
    assert len(source._admin.listings) == 2


def test_a_round_that_began_before_the_moment_does_not_count_and_the_wait_is_bounded(source):
    source._admin.release.clear()  # the next report hangs
    deadline = time.monotonic() + 5
    while len(source._admin.listings) < 2 and time.monotonic() < deadline:
        source._wake.set()
        time.sleep(0.01)
    since = time.monotonic()  # the round in progress began before this

    assert source.observed_since(since, timeout_s=0.3) is False
    source._admin.release.set()  # it ends; the next round begins after `since`
    assert source.observed_since(since, timeout_s=5)
    assert source._admin.listings[-1] >= since


class CancellableAdmin(SlowAdmin):
    """A report that hangs until cancelled fails as SwiftAdmin's does then."""

    def __init__(self, cluster, timeout):
        super().__init__(cluster, timeout)
        self.cancelled = threading.Event()

    def dispersion(self, timeout_s):
        if self.cancelled.wait(timeout_s):
            raise ClusterError("swift-dispersion-report: cancelled")
        return None

    def cancel(self):
        self.cancelled.set()


def test_a_report_cancelled_by_close_is_not_a_warning(monkeypatch, caplog):
    monkeypatch.setattr(sampler_module, "SwiftAdmin", CancellableAdmin)
    made = sampler_module.SwiftSource(cluster=None)
    made._dispersion = object()  # reports were coming: a failure would be said
    made.connect()
    _first_round_begun(made)  # its report hangs
    with caplog.at_level(logging.DEBUG, logger=sampler_module.__name__):
        made.close()
    assert not [r for r in caplog.records if "dispersion report" in r.getMessage()]


def test_ceph_samples_are_fresh_every_time():
    assert sampler_module.CephSource.observed_since(object(), time.monotonic(), 0) is True


class FreshSource:
    """A source whose slow round is there (or not) as the test says."""

    def __init__(self, there: bool):
        self.there = there

    def connect(self):
        pass

    def state(self):
        return {"health": "HEALTHY"}

    def observed_since(self, since, timeout_s):
        return self.there

    def close(self):
        pass


@pytest.mark.parametrize("there", [True, False])
def test_the_sampler_waits_for_two_samples_after_the_source_s_round(monkeypatch, there):
    monkeypatch.setattr(sampler_module, "state_source", lambda cluster: FreshSource(there))
    made = sampler_module.ClusterSampler(None, sink=lambda rows: None, interval_s=0.05)
    made.start()
    try:
        before = made.samples_taken
        assert made.observed_since(time.monotonic(), timeout_s=1) is there
        if there:  # two samples taken after the round: the second began after it ended
            assert made.samples_taken >= before + 2
    finally:
        made.stop()
