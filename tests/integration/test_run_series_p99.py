"""The run page's per-second p50 and p99: merged once when the recorder stores a second
(load_samples.second_p50_ms, second_p99_ms), or merged from the histograms for seconds stored
without them (runs recorded before migrations 0010 and 0017). Both must give the same series,
on real PostgreSQL."""

from __future__ import annotations

import random

from sqlalchemy import delete, update

from loadgen.samples import SampleRecorder
from loadgen.workload import OPS
from service.results.series import run_series
from service.store.models import LoadSample, Run
from service.store.recording import RunRecorder


def _samples(seconds: int):
    rng = random.Random(7)
    recorder = SampleRecorder(wall_start=1_700_000_000.0, mono_start=0.0)
    for second in range(seconds):
        for op in OPS:
            for _ in range(rng.randrange(0, 40)):
                recorder.success(op, second + rng.random(), rng.expovariate(1 / 0.02), 4096)
    return recorder.take_closed(float(seconds), OPS)


def test_the_stored_second_percentiles_equal_the_merge_of_its_histograms(sessions):
    recorder = RunRecorder.create(sessions, title="p99 test", cluster="lab-ceph",
                                  cluster_kind="ceph", workload={})
    try:
        recorder.load_samples(_samples(30))
        with sessions() as session:
            stored = run_series(session, recorder.run_id)["load"]
        with sessions.begin() as session:
            session.execute(update(LoadSample).where(LoadSample.run_id == recorder.run_id)
                            .values(second_p50_ms=None, second_p99_ms=None))
        with sessions() as session:
            merged = run_series(session, recorder.run_id)["load"]
        assert len(stored) == 30
        assert [p["p99_ms"] for p in stored] == [p["p99_ms"] for p in merged]
        assert [p["p50_ms"] for p in stored] == [p["p50_ms"] for p in merged]
        assert all(p["p50_ms"] <= p["p99_ms"] for p in stored if p["p99_ms"] is not None)
        assert sum(p["p99_ms"] is not None for p in stored) >= 25
        assert len({p["p99_ms"] for p in stored}) > 5  # real, varied values
    finally:
        with sessions.begin() as session:
            session.execute(delete(Run).where(Run.id == recorder.run_id))
