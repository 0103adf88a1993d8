"""The open-loop engine: fixed intended starts, latency from the intended start, missed starts."""

import threading
import time
from collections import Counter
from itertools import islice

import pytest

from loadgen.ledger import Ledger
from loadgen.openloop import OpenLoop, container_names, intended_starts, op_chooser
from loadgen.payload import PayloadSource
from loadgen.samples import SampleRecorder, merge_histograms
from loadgen.workload import OPS, parse_workload


class FakeDriver:
    """Objects in a dict; each op completes from a timer thread `delay` s after submit.

    hold=True keeps completions until release(); stall_first_submit_s blocks the
    first submit call itself; fail_writes acknowledges no write.
    """

    def __init__(self, delay=0.0, hold=False, stall_first_submit_s=0.0, fail_writes=False):
        self.objects = {}
        self.delay = delay
        self.hold = hold
        self.held = []
        self.stall = stall_first_submit_s
        self.fail_writes = fail_writes

    def _complete(self, finish):
        if self.stall:
            stall, self.stall = self.stall, 0.0
            time.sleep(stall)
        if self.hold:
            self.held.append(finish)
        else:
            threading.Timer(self.delay, finish).start()

    def release(self):
        held, self.held = self.held, []
        for finish in held:
            threading.Thread(target=finish).start()

    def write(self, container, name, data, done):
        def finish():
            if self.fail_writes:
                done(False, 0, "EIO", None)
            else:
                self.objects[(container, name)] = data
                done(True, len(data), None, None)
        self._complete(finish)

    def read(self, container, name, size, done):
        def finish():
            data = self.objects.get((container, name))
            if data is None:
                done(False, 0, "ENOENT", None)
            else:
                done(True, len(data), None, data)
        self._complete(finish)

    def delete(self, container, name, done):
        def finish():
            self.objects.pop((container, name), None)
            done(True, 0, None, None)
        self._complete(finish)

    def head(self, container, name, done):
        def finish():
            there = (container, name) in self.objects
            done(there, 0, None if there else "ENOENT", None)
        self._complete(finish)

    def list(self, container, done):
        def finish():
            names = "\n".join(n for c, n in self.objects if c == container).encode()
            done(True, len(names), None, names)
        self._complete(finish)


@pytest.fixture(scope="module")
def payloads():
    return PayloadSource(seed=1, min_size=64, max_size=64)


def make_loop(driver, payloads, ledger=None, **workload):
    workload = parse_workload({"duration_s": 0.1, "rate": 100, "mix": {"write": 100},
                               **workload})
    recorder = SampleRecorder(wall_start=time.time(), mono_start=time.monotonic())
    return OpenLoop(driver, workload, recorder, Ledger() if ledger is None else ledger, payloads,
                    "obj")


def run_to_end(loop, drain_s=5.0):
    """Run until the workload's duration is over, then drain the in-flight ops."""
    loop.start()
    loop._thread.join(timeout=10)
    loop.stop(drain_s=drain_s)


def samples_of(loop):
    return [s for s in loop.recorder.take_all(time.monotonic(), OPS)]


def pooled(samples):
    return merge_histograms([s.histogram for s in samples])


# intended_starts ------------------------------------------------------------------------


def test_intended_starts_are_exactly_start_plus_index_over_rate():
    assert list(islice(intended_starts(10.0, 4.0), 5)) == [10.0, 10.25, 10.5, 10.75, 11.0]


def test_intended_starts_do_not_drift_after_100000_steps():
    start, rate = 1_000_000.0, 3.0  # 1/3 is not exact in binary: a running sum would drift
    starts = list(islice(intended_starts(start, rate), 100_001))

    assert starts[100_000] == start + 100_000 / rate
    assert all(t == start + i / rate for i, t in enumerate(starts))


# op_chooser -----------------------------------------------------------------------------


def test_op_chooser_draws_the_mix_proportions_within_one_percent_over_100k_draws():
    choose = op_chooser({"read": 80, "write": 15, "delete": 5}, seed=1)
    counts = Counter(choose() for _ in range(100_000))

    assert counts["read"] / 100_000 == pytest.approx(0.80, abs=0.01)
    assert counts["write"] / 100_000 == pytest.approx(0.15, abs=0.01)
    assert counts["delete"] / 100_000 == pytest.approx(0.05, abs=0.01)


def test_op_chooser_never_draws_an_operation_with_a_zero_share():
    choose = op_chooser({"read": 0, "write": 100, "delete": 0}, seed=1)

    assert {choose() for _ in range(1000)} == {"write"}


def test_op_chooser_is_reproducible_with_the_same_seed():
    mix = {"read": 50, "write": 30, "delete": 20}
    a, b = op_chooser(mix, seed=42), op_chooser(mix, seed=42)

    assert [a() for _ in range(1000)] == [b() for _ in range(1000)]


def test_op_chooser_differs_with_another_seed():
    mix = {"read": 50, "write": 30, "delete": 20}
    a, b = op_chooser(mix, seed=1), op_chooser(mix, seed=2)

    assert [a() for _ in range(1000)] != [b() for _ in range(1000)]


def test_container_names_have_at_least_three_characters_and_are_numbered():
    assert container_names(parse_workload({"containers": 2})) == ["faultline-000",
                                                                 "faultline-001"]


# OpenLoop -------------------------------------------------------------------------------


def test_latency_includes_a_stall_of_the_cluster(payloads):
    loop = make_loop(FakeDriver(delay=0.5), payloads, rate=20)  # 2 writes

    run_to_end(loop)

    histogram = pooled(samples_of(loop))
    assert histogram.get_total_count() == 2
    assert histogram.get_value_at_percentile(0) >= 500_000  # us


def test_latency_is_measured_from_the_intended_start_not_the_submit(payloads):
    # The first submit blocks 0.5 s; the ops meant for +0.1 s and +0.2 s are submitted
    # late and complete at once, yet their latency counts the wait (no coordinated omission).
    loop = make_loop(FakeDriver(stall_first_submit_s=0.5), payloads, rate=10, duration_s=0.3)

    run_to_end(loop)

    histogram = pooled(samples_of(loop))
    assert loop.submitted == 3
    assert histogram.get_total_count() == 3
    assert histogram.get_value_at_percentile(50) >= 400_000  # us; the op meant for +0.1 s
    assert max(loop.lag_s) >= 0.3


def test_starts_beyond_max_in_flight_are_counted_as_missed_not_queued(payloads):
    driver = FakeDriver(hold=True)
    loop = make_loop(driver, payloads, rate=200, duration_s=0.1, max_in_flight=2)  # 20 starts

    loop.start()
    loop._thread.join(timeout=10)
    driver.release()
    loop.stop(drain_s=5)

    samples = samples_of(loop)
    assert loop.submitted == 2
    assert sum(s.missed for s in samples) == 18
    assert sum(s.ops for s in samples) == 2


def test_writes_enter_the_ledger_only_when_acknowledged(payloads):
    driver = FakeDriver(hold=True)
    ledger = Ledger()
    loop = make_loop(driver, payloads, ledger=ledger, rate=100, duration_s=0.05)  # 5 writes

    loop.start()
    loop._thread.join(timeout=10)
    assert len(driver.held) == 5
    assert len(ledger) == 0

    driver.release()
    loop.stop(drain_s=5)
    assert sorted(e.name for e in ledger.entries()) == [f"obj-{i}" for i in range(5)]
    assert {(e.container, e.name) for e in ledger.entries()} == set(driver.objects)


def test_a_failed_write_is_an_error_and_not_in_the_ledger(payloads):
    ledger = Ledger()
    loop = make_loop(FakeDriver(fail_writes=True), payloads, ledger=ledger, duration_s=0.05)

    run_to_end(loop)

    samples = samples_of(loop)
    assert len(ledger) == 0
    assert sum(s.errors.get("EIO", 0) for s in samples) == 5
    assert sum(s.ops for s in samples) == 0


def _ledger_with_one_object(driver, payloads, content):
    ledger = Ledger()
    ledger.add("faultline-000", "obj-old", 64)
    driver.objects[("faultline-000", "obj-old")] = content
    return ledger


def test_a_read_with_the_written_content_is_a_success(payloads):
    driver = FakeDriver()
    ledger = _ledger_with_one_object(driver, payloads, payloads.content("obj-old", 64))
    loop = make_loop(driver, payloads, ledger=ledger, mix={"read": 100}, duration_s=0.05)

    run_to_end(loop)

    samples = [s for s in samples_of(loop) if s.op == "read"]
    assert sum(s.ops for s in samples) == 5
    assert sum(s.bytes for s in samples) == 5 * 64
    assert sum(s.error_count for s in samples) == 0


def test_a_read_with_other_content_is_classified_corrupt(payloads):
    driver = FakeDriver()
    ledger = _ledger_with_one_object(driver, payloads, b"x" * 64)
    loop = make_loop(driver, payloads, ledger=ledger, mix={"read": 100}, duration_s=0.05)

    run_to_end(loop)

    samples = [s for s in samples_of(loop) if s.op == "read"]
    assert sum(s.ops for s in samples) == 0
    assert sum(s.errors.get("corrupt", 0) for s in samples) == 5


def test_reads_and_deletes_become_writes_while_the_ledger_is_empty(payloads):
    driver = FakeDriver()
    loop = make_loop(driver, payloads, mix={"read": 50, "delete": 50}, duration_s=0.05)

    run_to_end(loop)

    by_op = Counter()
    for s in samples_of(loop):
        by_op[s.op] += s.ops
    assert by_op["write"] >= 1
    assert sum(by_op.values()) == 5
    assert sum(s.error_count for s in samples_of(loop)) == 0


def test_a_list_reads_a_container_s_names_into_the_history_and_a_head_finds_objects(payloads):
    driver = FakeDriver()
    ledger = _ledger_with_one_object(driver, payloads, payloads.content("obj-old", 64))
    loop = make_loop(driver, payloads, ledger=ledger, mix={"list": 50, "head": 50},
                     duration_s=0.2)

    run_to_end(loop)

    by_op = Counter()
    for s in loop.recorder.take_all(time.monotonic(), loop.workload.ops()):
        by_op[s.op] += s.ops
        assert s.error_count == 0
    assert by_op["list"] > 0 and by_op["head"] > 0 and by_op["write"] == 0
    assert by_op["list"] + by_op["head"] == 20
    listings = loop.history.history.listings
    assert len(listings) == by_op["list"]
    assert all(listing.names == frozenset({"obj-old"}) for listing in listings)
    assert ledger.entries()  # a head holds its object from deletes only while it runs


def test_a_head_of_an_object_gone_behind_the_load_s_back_is_its_error(payloads):
    driver = FakeDriver()
    ledger = _ledger_with_one_object(driver, payloads, payloads.content("obj-old", 64))
    driver.objects.clear()
    loop = make_loop(driver, payloads, ledger=ledger, mix={"head": 100}, duration_s=0.05)

    run_to_end(loop)

    samples = [s for s in loop.recorder.take_all(time.monotonic(), loop.workload.ops())
               if s.op == "head"]
    assert sum(s.errors.get("ENOENT", 0) for s in samples) == 5
