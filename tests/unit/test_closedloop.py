"""The closed-loop engine: exactly `workers` operations in flight, never more, and no
recursion when a driver completes an operation while it is being submitted."""

import threading
import time

from loadgen.closedloop import ClosedLoop
from loadgen.ledger import Ledger
from loadgen.payload import PayloadSource
from loadgen.samples import SampleRecorder
from loadgen.workload import OPS, parse_workload


class CountingDriver:
    """Completes each write from its own thread after `delay_s`, or at once on the caller's
    thread (a submit that fails before it is sent); counts what is in flight."""

    def __init__(self, delay_s=0.002, synchronous=False):
        self.delay_s = delay_s
        self.synchronous = synchronous
        self.in_flight = 0
        self.most = 0
        self.lock = threading.Lock()

    def write(self, container, name, data, done):
        with self.lock:
            self.in_flight += 1
            self.most = max(self.most, self.in_flight)

        def finish():
            with self.lock:
                self.in_flight -= 1
            if self.synchronous:
                done(False, 0, "EIO", None)
            else:
                done(True, len(data), None, None)

        if self.synchronous:
            finish()
        else:
            threading.Timer(self.delay_s, finish).start()


def _run(driver, workers, seconds):
    workload = parse_workload({"mix": {"write": 100}, "workers": workers, "prefill": False,
                               "objects_per_container": 0, "object_size": 64})
    recorder = SampleRecorder(time.time(), time.monotonic())
    loop = ClosedLoop(driver, workload, recorder, Ledger(), PayloadSource(1, 64, 64), "t")
    loop.start()
    time.sleep(seconds)
    loop.stop()
    return loop, recorder.take_all(time.monotonic(), OPS)


def test_it_keeps_exactly_the_workers_in_flight():
    driver = CountingDriver()
    loop, samples = _run(driver, workers=8, seconds=0.5)
    assert driver.most == 8
    assert loop.in_flight == 0 and driver.in_flight == 0
    done = sum(s.ops for s in samples)
    assert done == loop.submitted and done > 8 * 10  # each slot went round many times


def test_operations_that_complete_while_being_issued_do_not_recurse():
    driver = CountingDriver(synchronous=True)
    loop, samples = _run(driver, workers=4, seconds=0.3)
    assert loop.failure is None
    errors = sum(s.error_count for s in samples)
    assert errors == loop.submitted and errors > 100
    assert driver.most == 1  # each failed at once, on the loop's thread
