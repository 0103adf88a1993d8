"""SampleRecorder buckets by completion second; per-second histograms merge exactly."""

import random

import pytest

from loadgen.samples import SampleRecorder, merge_histograms, new_histogram

T0 = 5000.0  # monotonic start of the load
WALL = 1_700_000_000.0


@pytest.fixture
def recorder():
    return SampleRecorder(wall_start=WALL, mono_start=T0)


def by_second(samples, op):
    return {s.second: s for s in samples if s.op == op}


def test_operations_are_bucketed_by_the_second_they_completed_in(recorder):
    recorder.success("write", T0 + 0.1, 0.9, 100)  # started before, completed in second 0
    recorder.success("write", T0 + 0.99, 0.01, 100)
    recorder.success("write", T0 + 1.0, 0.5, 100)

    samples = by_second(recorder.take_closed(T0 + 2.0, ("write",)), "write")

    assert samples[0].ops == 2
    assert samples[0].bytes == 200
    assert samples[1].ops == 1


def test_a_sample_carries_the_wall_clock_start_of_its_second(recorder):
    recorder.success("read", T0 + 3.5, 0.001, 1)

    samples = by_second(recorder.take_closed(T0 + 4.0, ("read",)), "read")

    assert samples[3].ts == WALL + 3


def test_empty_seconds_are_emitted_for_every_op(recorder):
    recorder.success("read", T0 + 0.5, 0.001, 10)
    recorder.success("read", T0 + 3.5, 0.001, 10)

    samples = recorder.take_closed(T0 + 4.2, ("read", "write"))

    assert [(s.second, s.op) for s in samples] == [
        (0, "read"), (0, "write"), (1, "read"), (1, "write"),
        (2, "read"), (2, "write"), (3, "read"), (3, "write")]
    empty = by_second(samples, "read")[1]
    assert (empty.ops, empty.bytes, empty.errors, empty.missed) == (0, 0, {}, 0)
    assert (empty.p50_ms, empty.p99_ms, empty.max_ms, empty.histogram) == (None, None, None, "")


def test_the_current_second_is_not_handed_out_before_it_ends(recorder):
    recorder.success("read", T0 + 1.5, 0.001, 10)

    samples = recorder.take_closed(T0 + 1.9, ("read",))

    assert [s.second for s in samples] == [0]
    assert samples[0].ops == 0


def test_each_second_is_handed_out_once(recorder):
    recorder.success("read", T0 + 0.5, 0.001, 10)

    first = recorder.take_closed(T0 + 2.0, ("read",))
    again = recorder.take_closed(T0 + 2.0, ("read",))
    later = recorder.take_closed(T0 + 3.0, ("read",))

    assert [s.second for s in first] == [0, 1]
    assert again == []
    assert [s.second for s in later] == [2]
    assert sum(s.ops for s in first + again + later) == 1


def test_a_completion_in_a_second_already_handed_out_counts_in_the_first_open_one(recorder):
    recorder.take_closed(T0 + 2.0, ("read",))

    recorder.success("read", T0 + 0.5, 0.001, 10)
    samples = by_second(recorder.take_closed(T0 + 3.0, ("read",)), "read")

    assert list(samples) == [2]
    assert samples[2].ops == 1


def test_take_all_includes_the_current_partial_second(recorder):
    recorder.success("read", T0 + 1.2, 0.001, 10)

    samples = recorder.take_all(T0 + 1.3, ("read",))

    assert [(s.second, s.ops) for s in samples] == [(0, 0), (1, 1)]


def test_final_samples_fold_the_drain_into_the_last_full_second(recorder):
    recorder.success("read", T0 + 1.5, 0.001, 10)
    recorder.success("read", T0 + 2.004, 0.003, 10)  # issued before 2 s, done just after
    recorder.error("read", T0 + 2.2, "timeout")

    samples = recorder.take_final(2, ("read",))

    assert [(s.second, s.ops, s.errors) for s in samples] == [
        (0, 0, {}), (1, 2, {"timeout": 1})]


def test_errors_are_counted_by_class_and_not_as_operations(recorder):
    recorder.error("read", T0 + 0.1, "timeout")
    recorder.error("read", T0 + 0.2, "timeout")
    recorder.error("read", T0 + 0.3, "ENOENT")

    sample = recorder.take_closed(T0 + 1.0, ("read",))[0]

    assert sample.errors == {"timeout": 2, "ENOENT": 1}
    assert sample.error_count == 3
    assert sample.ops == 0


def test_missed_starts_are_counted_in_the_second_of_their_intended_start(recorder):
    recorder.missed("write", T0 + 1.1)
    recorder.missed("write", T0 + 1.9)

    samples = by_second(recorder.take_closed(T0 + 2.0, ("write",)), "write")

    assert samples[0].missed == 0
    assert samples[1].missed == 2


def test_latencies_are_reported_in_milliseconds(recorder):
    for _ in range(99):
        recorder.success("read", T0 + 0.5, 0.001, 1)  # 1000 us, exact in HDR
    recorder.success("read", T0 + 0.5, 0.002, 1)

    sample = recorder.take_closed(T0 + 1.0, ("read",))[0]

    assert sample.p50_ms == 1.0
    assert sample.p99_ms == 1.0
    assert sample.max_ms == 2.0


def test_merged_per_second_histograms_equal_the_histogram_of_all_values_pooled(recorder):
    rng = random.Random(7)
    pooled = new_histogram()
    for second in range(5):
        for _ in range(2000):
            latency_s = rng.lognormvariate(-5, 1.5)  # ~7 ms median, a long tail
            recorder.success("read", T0 + second + 0.5, latency_s, 1)
            pooled.record_value(max(1, int(latency_s * 1e6)))

    samples = recorder.take_closed(T0 + 5.0, ("read",))
    merged = merge_histograms([s.histogram for s in samples])

    assert merged.get_total_count() == pooled.get_total_count() == 10_000
    for percentile in (0, 50, 90, 99, 99.9, 100):
        assert merged.get_value_at_percentile(percentile) == \
            pooled.get_value_at_percentile(percentile)
    assert merged.get_min_value() == pooled.get_min_value()
    assert merged.get_max_value() == pooled.get_max_value()


def test_merge_histograms_skips_seconds_without_operations():
    assert merge_histograms(["", ""]).get_total_count() == 0


def test_a_seconds_histogram_is_the_one_recording_each_operation_would_give(recorder):
    # latencies are counted per distinct value and recorded when the second is handed out;
    # the encoding must be the same as recording every operation, drain folded in included
    rng = random.Random(11)
    one_by_one = new_histogram()
    for i in range(3000):
        latency_s = rng.choice([0.0000001, rng.lognormvariate(-6, 1), 700.0])
        done = T0 + 1.2 if i % 3 else T0 + 2.7  # a third completes in the drain after 2 s
        recorder.success("write", done, latency_s, 1)
        one_by_one.record_value(max(1, min(600_000_000, int(latency_s * 1e6))))

    (sample,) = [s for s in recorder.take_final(2, ("write",)) if s.second == 1]

    assert sample.ops == 3000
    assert sample.histogram == one_by_one.encode().decode()
    assert sample.max_ms == one_by_one.get_max_value() / 1000


@pytest.mark.parametrize("seed", range(20))
def test_a_seconds_p50_and_p99_are_hdrhs_own(recorder, seed):
    # computed from the second's distinct latencies instead of hdrh's walk of its counts;
    # few or many operations, ties, values sharing an HDR bucket, one extreme
    rng = random.Random(seed)
    count = rng.choice([1, 2, 3, 7, 100, 1500])
    for _ in range(count):
        latency_s = rng.choice([0.0005, 0.0005001, rng.lognormvariate(-5, 2), 700.0])
        recorder.success("write", T0 + 0.5, latency_s, 1)

    sample = recorder.take_closed(T0 + 1.0, ("write",))[0]
    histogram = merge_histograms([sample.histogram])

    assert sample.ops == count
    assert sample.p50_ms == histogram.get_value_at_percentile(50) / 1000
    assert sample.p99_ms == histogram.get_value_at_percentile(99) / 1000
