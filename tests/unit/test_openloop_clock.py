"""The open-loop scheduler against a fake clock: every intended start is issued at its time
whatever the clock does, a stall shows as lag and latency (never as fewer requests), and
the drivers of one run interleave their schedules into one at the whole rate."""

import threading

from loadgen.ledger import Ledger
from loadgen.openloop import OpenLoop
from loadgen.payload import PayloadSource
from loadgen.samples import SampleRecorder
from loadgen.workload import OPS, parse_workload


class FakeClock:
    """Time moves only when the scheduler waits (or when a test moves it)."""

    def __init__(self):
        self.now = 0.0
        self.lock = threading.Lock()

    def __call__(self):
        return self.now

    def wait(self, seconds):
        self.now += seconds
        return False  # not stopped


class RecordingDriver:
    """Remembers when (on the fake clock) each write was submitted; completes each at once."""

    def __init__(self, clock, stall_at=None, stall_s=0.0):
        self.clock = clock
        self.submitted = []
        self.stall_at, self.stall_s = stall_at, stall_s

    def write(self, container, name, data, done):
        if self.stall_at is not None and self.clock() >= self.stall_at:
            self.clock.now += self.stall_s  # the cluster froze while this was submitted
            self.stall_at = None
        self.submitted.append(self.clock())
        done(True, len(data), None, None)


def _loop(clock, driver, rate=100.0, seconds=2.0, stream=0, phase_s=0.0):
    workload = parse_workload({"rate": rate, "duration_s": seconds, "mix": {"write": 100},
                               "objects_per_container": 0, "object_size": 64})
    recorder = SampleRecorder(wall_start=0.0, mono_start=0.0)
    loop = OpenLoop(driver, workload, recorder, Ledger(), PayloadSource(1, 64, 64), "t",
                    stream=stream, phase_s=phase_s)
    loop.clock = clock
    loop._stop.wait = clock.wait
    loop._schedule()
    return loop, recorder


def test_each_operation_is_submitted_at_its_intended_time():
    clock = FakeClock()
    driver = RecordingDriver(clock)
    loop, _ = _loop(clock, driver, rate=100, seconds=2)
    assert len(driver.submitted) == 200
    assert all(abs(t - i / 100) < 1e-9 for i, t in enumerate(driver.submitted))
    assert max(loop.lag_s) < 1e-9


def test_a_stall_is_lag_and_latency_not_fewer_requests():
    clock = FakeClock()
    driver = RecordingDriver(clock, stall_at=1.0, stall_s=0.5)
    loop, recorder = _loop(clock, driver, rate=100, seconds=2)
    assert len(driver.submitted) == 200  # the 50 starts due in the stall are all issued
    assert max(loop.lag_s) >= 0.5 - 0.01  # the first after the stall started 0.5 s late
    samples = recorder.take_all(clock() + 1, OPS)
    worst = max(s.max_ms for s in samples if s.max_ms is not None)
    assert worst >= 500  # latency counts from the intended start


def test_drivers_with_phases_interleave_into_one_schedule_at_the_whole_rate():
    starts = []
    drivers = 4
    for index in range(drivers):
        clock = FakeClock()
        driver = RecordingDriver(clock)
        # each driver runs rate/N, shifted by index/rate, as service.runs.load_driver sets them
        _loop(clock, driver, rate=100 / drivers, seconds=1, stream=index, phase_s=index / 100)
        starts += driver.submitted
    starts.sort()
    assert len(starts) == 100
    gaps = [b - a for a, b in zip(starts, starts[1:], strict=False)]
    assert all(abs(g - 0.01) < 1e-9 for g in gaps)


def test_another_stream_draws_other_operations():
    mix = {"read": 50, "write": 30, "delete": 20}
    workload = parse_workload({"mix": mix})
    a = OpenLoop(None, workload, None, Ledger(), None, "a", stream=0)
    b = OpenLoop(None, workload, None, Ledger(), None, "b", stream=1)
    assert a.seed != b.seed
