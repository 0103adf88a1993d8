"""A driver's metrics from its per-second samples: counters add up, and the latency
histogram's buckets count the same latencies as the HDR histograms they come from."""

from __future__ import annotations

import time

from prometheus_client import generate_latest
from prometheus_client.registry import CollectorRegistry

from loadgen.metrics import DriverMetrics, cumulative_buckets
from loadgen.samples import Sample, new_histogram


def _sample(second: int, op: str, latencies_us: list[int], errors=None) -> Sample:
    histogram = new_histogram()
    for value in latencies_us:
        histogram.record_value(value)
    return Sample(second=second, ts=1000.0 + second, op=op, ops=len(latencies_us),
                  bytes=4096 * len(latencies_us), errors=errors or {}, missed=0,
                  p50_ms=None, p99_ms=None, max_ms=None,
                  histogram=histogram.encode().decode() if latencies_us else "")


def _exposition(metrics: DriverMetrics) -> str:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(metrics)
    return generate_latest(registry).decode()


def test_buckets_count_values_at_or_below_each_bound():
    histogram = new_histogram()
    for value in (800, 2_000, 2_000, 40_000, 3_000_000):  # microseconds
        histogram.record_value(value)
    buckets = dict(cumulative_buckets(histogram))
    assert buckets["0.001"] == 1
    assert buckets["0.0025"] == 3
    assert buckets["0.025"] == 3
    assert buckets["0.05"] == 4
    assert buckets["2.5"] == 4
    assert buckets["5.0"] == 5
    assert buckets["+Inf"] == 5


def test_seconds_add_up_across_samples_and_ops():
    metrics = DriverMetrics()
    metrics.add([_sample(0, "read", [1_000, 3_000]), _sample(0, "write", [20_000])])
    metrics.add([_sample(1, "read", [400_000], errors={"timeout": 2, "503": 1})])
    metrics.fault_from = 0.0
    text = _exposition(metrics)
    assert 'faultline_driver_ops_total{op="read"} 3.0' in text
    assert 'faultline_driver_ops_total{op="write"} 1.0' in text
    assert 'faultline_driver_bytes_total{op="read"} 12288.0' in text
    assert 'faultline_driver_errors_total{class="timeout",op="read"} 2.0' in text
    assert 'faultline_driver_errors_total{class="503",op="read"} 1.0' in text
    assert 'faultline_driver_latency_seconds_bucket{le="0.25",op="read"} 2.0' in text
    assert 'faultline_driver_latency_seconds_bucket{le="0.5",op="read"} 3.0' in text
    assert 'faultline_driver_latency_seconds_count{op="read"} 3.0' in text
    assert 'faultline_driver_fault_active 1.0' in text
    assert 'faultline_driver_last_sample_timestamp_seconds{op="read"} 1002.0' in text
    # the sum is the HDR's (3 significant digits): 0.404 s
    line = next(x for x in text.splitlines()
                if x.startswith('faultline_driver_latency_seconds_sum{op="read"}'))
    assert abs(float(line.split()[-1]) - 0.404) < 0.001


def test_the_fault_is_active_from_its_start_until_it_is_cleared():
    metrics = DriverMetrics()
    assert "faultline_driver_fault_active 0.0" in _exposition(metrics)
    metrics.fault_from = time.time() + 3600  # a pause before the action: not yet
    assert "faultline_driver_fault_active 0.0" in _exposition(metrics)
    metrics.fault_from = time.time() - 1
    assert "faultline_driver_fault_active 1.0" in _exposition(metrics)
    metrics.fault_from = None
    assert "faultline_driver_fault_active 0.0" in _exposition(metrics)
