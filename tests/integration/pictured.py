"""The runs and the calibration the README's screenshots show, stored with fixed ids, times
and names so that the pictures come out the same each time (tests/integration/
test_dashboard_charts.py).

A Ceph OSD kill as a client sees it: a 5 s ramp, a steady 100 ops/s, a 3 s stall at the
fault then slow seconds, recovery, and a burst above 1,000 ops/s in the last seconds (the
load catching up as it stops): the burst that used to flatten the dip. A Swift run whose
fault comes at another second of its load, to be aligned on it. A calibration whose
latency explodes past its knee.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import delete
from sqlalchemy.orm import Session, sessionmaker

from loadgen.samples import Sample, new_histogram
from service.results import figures
from service.results.capacity import Limits, Stage
from service.results.knee import knee_of
from service.store.models import Calibration, CalibrationStage, ClusterSample, Event, Run
from service.store.recording import RunRecorder

CEPH_RUN_ID, SWIFT_RUN_ID, CALIBRATION_ID = 9101, 9102, 9101
START = 1_700_000_000.0
BURST_OPS = 1_400  # each of the last BURST_S seconds
BURST_S = 3
STARTED = datetime(2026, 11, 25, 22, 0, tzinfo=UTC)


@dataclass(frozen=True)
class Shape:
    """Where a pictured run's fault falls in its load, in seconds from the load's start."""
    seconds: int
    fault: int
    restore: int
    stall_s: int  # no operation completes
    slow_s: int  # after the stall: slow operations at `slow_ops`
    slow_ops: int


CEPH = Shape(seconds=90, fault=40, restore=55, stall_s=3, slow_s=7, slow_ops=60)
SWIFT = Shape(seconds=75, fault=25, restore=40, stall_s=2, slow_s=6, slow_ops=50)


def _ops_and_latency(shape: Shape, second: int) -> tuple[int, int]:
    """(read ops, latency in µs) of one second of the load."""
    after = second - shape.fault
    if second < 5:
        return 20 * (second + 1), 2_500  # the ramp
    if 0 <= after < shape.stall_s:
        return 0, 0
    if shape.stall_s <= after < shape.stall_s + shape.slow_s:
        return shape.slow_ops, 40_000 - 3_000 * (after - shape.stall_s)
    if second >= shape.seconds - BURST_S:
        return BURST_OPS, 6_000
    return 100, 2_000


def _samples(shape: Shape) -> list[Sample]:
    """Each second's reads and writes (a write takes twice a read): the second's p50 and
    p99 come from both, merged as the recorder merges them."""
    out = []
    for second in range(shape.seconds):
        ops, latency_us = _ops_and_latency(shape, second)
        for op, share, factor in (("read", 0.8, 1), ("write", 0.2, 2)):
            n = round(ops * share)
            histogram = new_histogram()
            for i in range(n):
                histogram.record_value(latency_us * factor + 13 * i)
            out.append(Sample(second=second, ts=START + second, op=op, ops=n,
                              bytes=n * 4096, errors={"timeout": 2} if second == shape.fault
                              + shape.stall_s and op == "read" else {}, missed=0,
                              p50_ms=None, p99_ms=None, max_ms=None,
                              histogram=histogram.encode().decode() if n else ""))
    return out


def _recovery(session: Session, run_id: int, kind: str, shape: Shape) -> None:
    """The cluster's side: degraded from just after the fault until full redundancy."""
    healed = shape.restore + 15
    for second in range(shape.seconds):
        hurt = shape.fault + 1 <= second < healed
        down = shape.fault <= second < shape.restore
        # what the analysis reads: the fault seen, redundancy, every daemon back
        seen = {"fault_seen": hurt, "fully_redundant": not hurt, "at_risk": hurt}
        if kind == "ceph":
            bad = max(0, 12 - (second - shape.restore)) if hurt else 0
            state = {"degraded_objects": 40 * bad, "misplaced_objects": 5 * bad,
                     "num_pgs": 32, "pgs_by_state": {"active+clean": 32 - bad,
                     **({"active+undersized+degraded": bad} if bad else {})},
                     "num_osds": 4, "num_in_osds": 4, "num_up_osds": 3 if down else 4, **seen}
        else:
            state = {"dispersion": {"object_pct": 66.67 if hurt else 100.0},
                     "handoff_partitions": 7 if hurt else 0, "down": int(down),
                     "oldest_pass_start": START + (shape.restore + 2 if second > shape.restore
                                                   else 0), **seen}
        session.add(ClusterSample(run_id=run_id, ts=START + second, state=state,
                                  health="HEALTH_WARN" if hurt else "HEALTH_OK"))
    # detected a second after the fault, clients back (after the slow seconds) shortly before
    # the restore: the labels of the markers would overlap if they were not staggered
    recovered = shape.fault + shape.stall_s + shape.slow_s
    for kind_, t in (("baseline_started", 10), ("fault_injected", shape.fault),
                     ("cluster_noticed", shape.fault + 1), ("restored", shape.restore),
                     ("client_recovered", recovered), ("fully_redundant", healed)):
        session.add(Event(run_id=run_id, ts=START + t, kind=kind_, detail={}))


def _store_run(sessions: sessionmaker[Session], run_id: int, kind: str, shape: Shape,
               title: str) -> None:
    with sessions.begin() as session:
        session.add(Run(id=run_id, title=title, cluster=f"lab-{kind}", cluster_kind=kind,
                        load_api="rados" if kind == "ceph" else "swift", status="running",
                        workload={"rate": 100, "ramp_s": 5, "object_size": 4096,
                                  "mix": {"read": 80, "write": 20}},
                        started_at=STARTED, load_started_ts=START,
                        fault_ts=START + shape.fault))
    RunRecorder(sessions, run_id).load_samples(_samples(shape))
    with sessions.begin() as session:
        _recovery(session, run_id, kind, shape)
    with sessions.begin() as session:
        run = session.get(Run, run_id)
        run.figures = figures.compute(session, run_id)
        run.status, run.ended_at = "completed", STARTED.replace(minute=2)


STAGES = (  # in flight, ops/s, p50 ms, p99 ms: the knee at 8, latency explodes past 16
    (1, 150.0, 2.0, 4.0), (2, 290.0, 2.2, 5.0), (4, 520.0, 2.8, 6.5), (8, 800.0, 3.5, 9.0),
    (16, 850.0, 6.0, 38.0), (32, 860.0, 12.0, 420.0))
# the levels around the first pass's knee measured twice more (16 is past the p99 factor):
# in flight, repeat, ops/s, p50 ms, p99 ms
REPEATS = ((4, 1, 530.0, 2.8, 6.4), (8, 1, 790.0, 3.5, 9.2), (4, 2, 515.0, 2.9, 6.6),
           (8, 2, 812.0, 3.4, 8.9))


def _store_calibration(session: Session) -> None:
    cal = Calibration(id=CALIBRATION_ID, cluster="lab-ceph", cluster_kind="ceph",
                      load_api="rados",
                      workload={"object_size": 4096, "object_size_max": None,
                                "mix": {"read": 80, "write": 20}},
                      settings={"stage_s": 10, "warmup_s": 3, "p99_factor": 3.0},
                      status="completed", started_at=STARTED, ended_at=STARTED,
                      stop_reason="throughput rose less than 5% over two stages",
                      knee_in_flight=8, capacity_ops=800.0, capacity_mbps=3.28,
                      generator_bound=False, release="pacific",
                      topology={"nodes": 4, "zones": 3, "devices": 4, "osds": 4,
                                "services": {"mgr": 1, "mon": 1, "osd": 4}})
    rows = [(n, 0, ops_s, p50, p99) for n, ops_s, p50, p99 in STAGES] + list(REPEATS)
    knee = knee_of([Stage(in_flight=n, seconds=10, ops=int(ops_s * 10), ops_s=ops_s, mb_s=0.0,
                          errors=0, p99_ms=p99, repeat=r) for n, r, ops_s, _, p99 in rows],
                   Limits(p99_factor=3.0))
    cal.spread = knee.spread(2)
    assert (knee.in_flight, knee.ops_s) == (cal.knee_in_flight, cal.capacity_ops)
    for in_flight, repeat, ops_s, p50, p99 in rows:
        histogram = new_histogram()
        for i in range(1000):  # half below the median, the tail up to the p99 and past it
            ms = p50 * (0.5 + i / 1000) if i < 500 else p50 + (p99 - p50) * (i - 500) / 490
            histogram.record_value(int(ms * 1000))
        cal.stages.append(CalibrationStage(
            in_flight=in_flight, repeat=repeat, seconds=10, ops=int(ops_s * 10), ops_s=ops_s,
            mb_s=ops_s * 4096 / 1e6, errors=0, p50_ms=p50, p90_ms=(p50 + p99) / 2,
            p99_ms=p99, p999_ms=p99 * 1.2, histogram=histogram.encode().decode(),
            generator_cpu_cores=0.1 + in_flight / 100))
    session.add(cal)


def store(sessions: sessionmaker[Session]) -> None:
    """The pictured runs and calibration, replacing any left by an earlier test."""
    remove(sessions)
    _store_run(sessions, CEPH_RUN_ID, "ceph", CEPH, "Ceph survives the crash of one OSD")
    _store_run(sessions, SWIFT_RUN_ID, "swift", SWIFT,
               "Swift survives the crash of one object server")
    with sessions.begin() as session:
        _store_calibration(session)


def remove(sessions: sessionmaker[Session]) -> None:
    with sessions.begin() as session:
        session.execute(delete(Run).where(Run.id.in_((CEPH_RUN_ID, SWIFT_RUN_ID))))
        session.execute(delete(Calibration).where(Calibration.id == CALIBRATION_ID))
