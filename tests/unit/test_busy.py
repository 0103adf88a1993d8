"""The generator's busy share (loadgen.busy): the time between a completion and the next
submit, counted once however the calls nest, summed over threads; and a calibration stage's
share through a driver that completes on one thread, as librados does."""

from __future__ import annotations

import queue
import threading
import time

from loadgen.busy import BusyMeter, MeteredDriver
from loadgen.stages import StageRunner
from loadgen.workload import parse_workload


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class StepDriver:
    """Keeps each `done`; a submission takes `submit_s` of the fake clock."""

    def __init__(self, clock: Clock, submit_s: float):
        self.clock, self.submit_s, self.pending = clock, submit_s, []

    def write(self, container, name, data, done):
        self.clock.now += self.submit_s
        self.pending.append(done)


def test_a_completion_counts_from_its_callback_to_the_next_submit_once_and_waits_do_not():
    clock = Clock()
    meter = BusyMeter(clock)
    inner = StepDriver(clock, submit_s=1.0)
    driver = MeteredDriver(inner, meter)

    def done(ok, nbytes, error, data):  # records for 2 s, then submits the next (1 s)
        clock.now += 2.0
        driver.write("c", "next", b"x", lambda *result: None)

    driver.write("c", "first", b"x", done)  # a first submission: 1 s
    clock.now += 10.0  # the cluster's time: not the client's
    inner.pending[0](True, 1, None, None)

    assert meter.busy_s() == 4.0  # 1 + (2 + 1): the nested submission counted once


def test_the_busy_seconds_of_every_thread_add_up():
    meter = BusyMeter()
    driver = MeteredDriver(StepDriver(Clock(), 0.0), meter)
    driver.driver.write = lambda *args: time.sleep(0.05)
    took: list[float] = []

    def slow_submit():
        start = time.monotonic()
        driver.write("c", "n", b"x", lambda *result: None)
        took.append(time.monotonic() - start)

    threads = [threading.Thread(target=slow_submit) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    # two slots held at once, each for its own submit: the sum of the two, whatever a busy
    # machine made of the 0.05 s sleeps (a fixed upper bound failed under load)
    assert 0.1 <= meter.busy_s() <= sum(took) + 0.001, (meter.busy_s(), took)


class FinisherDriver:
    """Completes every operation `latency_s` after its submission, all on one thread (as
    librados' finisher does); each submission first sleeps `client_s`: the client's work."""

    def __init__(self, latency_s: float, client_s: float = 0.0):
        self.latency_s, self.client_s = latency_s, client_s
        self.queue: queue.SimpleQueue = queue.SimpleQueue()
        threading.Thread(target=self._finish, daemon=True).start()

    def write(self, container, name, data, done):
        time.sleep(self.client_s)
        self.queue.put((time.monotonic() + self.latency_s, done, len(data)))

    def _finish(self):
        while True:
            due, done, size = self.queue.get()
            time.sleep(max(0.0, due - time.monotonic()))
            done(True, size, None, None)


WRITES = parse_workload({"mix": {"write": 100}, "prefill": False, "objects_per_container": 0,
                         "object_size": 64})


def test_a_stage_whose_client_work_fills_the_completion_thread_holds_a_whole_slot():
    slowed = StageRunner(FinisherDriver(latency_s=0.002, client_s=0.005), WRITES).run(
        4, warmup_s=0, measure_s=1)

    assert slowed.client_busy >= 0.8  # 5 ms of every ~5 ms on the one completion thread
    assert sum(s.ops for s in slowed.samples) <= 1 / 0.005 * 1.05


def test_a_stage_whose_cluster_is_slow_leaves_the_slots_to_the_cluster():
    cluster_bound = StageRunner(FinisherDriver(latency_s=0.010), WRITES).run(
        4, warmup_s=0, measure_s=1)

    assert cluster_bound.client_busy < 0.8, cluster_bound.client_busy
    # the loop did go round: each of the 4 slots completed several times (about 400 ops
    # when the machine is idle; 95 were seen under load, so no rate is asserted)
    assert sum(s.ops for s in cluster_bound.samples) > 20
