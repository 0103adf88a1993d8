"""The baseline's extension, recorded with the run in PostgreSQL (no lab): a baseline that is
not steady is measured on, by half of it at a time up to twice its length; a warm-up that
passes leaves the run valid, a queue that stays ends it invalid, and either way the run
keeps how long its baseline really was and why it was extended."""

from __future__ import annotations

import time
from types import SimpleNamespace

import pytest
from chaoslib.exceptions import InterruptExecution
from sqlalchemy import select

from loadgen.lag import LagLog
from loadgen.samples import Sample, new_histogram
from loadgen.workload import Workload
from service.runs.control import RunControl
from service.store.models import Event, Run
from service.store.recording import RunRecorder

RATE = 50
BASELINE_S = 20
HEALTHY = {"health": "HEALTH_OK", "checks": [], "down": 0, "fault_seen": False,
           "at_risk": False, "summary": "HEALTH_OK, 4/4 OSDs up"}


def control_of(sessions, latencies_ms: list[float]) -> RunControl:
    """A run's control with `latencies_ms` recorded as its seconds of load (one a second,
    at RATE, from 100 s ago), every start on time and a healthy cluster sampled."""
    recorder = RunRecorder.create(sessions, title="baseline extension", cluster="lab-ceph",
                                  cluster_kind="ceph", workload={"rate": RATE})
    start = time.time() - 100
    samples = []
    lags = LagLog()
    for second, latency in enumerate(latencies_ms):
        h = new_histogram()
        h.record_value(int(latency * 1000), RATE)
        samples.append(Sample(second=second, ts=start + second, op="read", ops=RATE,
                              bytes=RATE * 4096, errors={}, missed=0, p50_ms=latency,
                              p99_ms=latency, max_ms=latency, histogram=h.encode().decode()))
        for i in range(RATE):
            lags.add(second + i / RATE, 0.002)
    recorder.load_samples(samples)
    control = RunControl.__new__(RunControl)
    control.sessions, control.recorder = sessions, recorder
    control.workload = Workload(rate=RATE, ramp_s=0, baseline_s=BASELINE_S)
    control.load = SimpleNamespace(started_at=start, loop=SimpleNamespace(lags=lags))
    control.sampler = SimpleNamespace(recent=[(start + s + 0.5, "HEALTH_OK", HEALTHY)
                                              for s in range(len(latencies_ms))])
    control.on_invalid, control.validity, control._cpu_mark = "stop", None, None
    control.resolved_rate = None  # a rate in ops/s, not a share of a calibrated capacity
    control.start = start
    return control


def stored(sessions, run_id: int) -> tuple[list[dict], list[str]]:
    with sessions() as session:
        extended = [e.detail for e in session.execute(select(Event).where(
            Event.run_id == run_id, Event.kind == "baseline_extended").order_by(Event.ts))
            .scalars()]
        kinds = list(session.execute(select(Event.kind).where(Event.run_id == run_id))
                     .scalars())
    return extended, kinds


def forget(sessions, run_id: int) -> None:
    with sessions.begin() as session:
        session.delete(session.get(Run, run_id))


def test_a_warm_up_that_passes_is_measured_past_and_the_extension_recorded(sessions):
    # latency climbs through the first window (a transient: a compaction, caches filling),
    # then falls back and stays: the window slid on by 10 s shows no rise
    control = control_of(sessions, [10.0] * 5 + [10 + 50 * s for s in range(15)]
                         + [12.0] * 30)
    try:
        control.judge_baseline(control.start, control.start + BASELINE_S)

        verdict = control.validity
        assert verdict["valid"], verdict["reasons"]
        assert verdict["baseline_s"] == BASELINE_S and verdict["measured_s"] == 30
        assert len(verdict["extensions"]) == 1
        assert verdict["extensions"][0]["after_s"] == 20
        assert verdict["extensions"][0]["reasons"][0].startswith(
            "a queue built up during the baseline")
        extended, kinds = stored(sessions, control.run_id)
        assert [e["after_s"] for e in extended] == [20] and extended[0]["more_s"] == 10
        assert "baseline_judged" in kinds
    finally:
        forget(sessions, control.run_id)


def test_a_queue_that_stays_is_invalid_after_twice_the_baseline(sessions):
    control = control_of(sessions, [10 + 30 * s for s in range(60)])
    try:
        with pytest.raises(InterruptExecution, match="a queue built up during the baseline"):
            control.judge_baseline(control.start, control.start + BASELINE_S)

        verdict = control.validity
        assert not verdict["valid"]
        assert verdict["measured_s"] == 2 * BASELINE_S
        assert [e["after_s"] for e in verdict["extensions"]] == [20, 30]
        extended, _ = stored(sessions, control.run_id)
        assert len(extended) == 2
    finally:
        forget(sessions, control.run_id)


def test_a_baseline_that_held_is_not_extended(sessions):
    control = control_of(sessions, [12.0] * 50)
    try:
        control.judge_baseline(control.start, control.start + BASELINE_S)

        assert control.validity["valid"]
        assert control.validity["measured_s"] == BASELINE_S
        assert control.validity["extensions"] == []
        assert stored(sessions, control.run_id)[0] == []
    finally:
        forget(sessions, control.run_id)
