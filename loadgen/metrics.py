"""A load driver's Prometheus metrics, fed by its closed per-second samples.

The hot path never touches Prometheus: each closed second of each operation (one Sample,
with its HDR histogram) is added here once, so a scrape costs the driver nothing per op.
Latency is exposed as a Prometheus histogram whose buckets are counted from the
cumulative HDR histogram at scrape time: the same latencies the run's figures use,
coordinated omission corrected (measured from the intended start).

Which run a driver belongs to is not a label here: the service's HTTP service discovery
gives every driver target the labels run_id, cluster and experiment.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Iterator

from hdrh.histogram import HdrHistogram
from prometheus_client import start_http_server
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector, CollectorRegistry

from .samples import Sample, new_histogram

# seconds; HDR keeps microseconds, so any bound is exact to 3 significant digits
BUCKETS_S = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
             30.0, 60.0)


class DriverMetrics(Collector):
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ops: dict[str, int] = {}
        self._bytes: dict[str, int] = {}
        self._missed: dict[str, int] = {}
        self._errors: dict[tuple[str, str], int] = {}
        self._latency: dict[str, HdrHistogram] = {}
        self._last_second: dict[str, float] = {}
        self.load_running = False
        # when the fault's action starts (None: no fault on): Chaos Toolkit reports an
        # action only after its pause, while the cluster is hurt from its start
        self.fault_from: float | None = None

    def add(self, samples: Iterable[Sample]) -> None:
        with self._lock:
            for s in samples:
                self._ops[s.op] = self._ops.get(s.op, 0) + s.ops
                self._bytes[s.op] = self._bytes.get(s.op, 0) + s.bytes
                self._missed[s.op] = self._missed.get(s.op, 0) + s.missed
                for error_class, n in s.errors.items():
                    key = (s.op, error_class)
                    self._errors[key] = self._errors.get(key, 0) + n
                if s.histogram:
                    into = self._latency.setdefault(s.op, new_histogram())
                    into.add(HdrHistogram.decode(s.histogram))
                self._last_second[s.op] = max(self._last_second.get(s.op, 0.0), s.ts + 1)

    def collect(self) -> Iterator[Metric]:
        with self._lock:
            yield self._counter("faultline_driver_ops", "Operations completed", self._ops)
            yield self._counter("faultline_driver_bytes", "Payload bytes moved", self._bytes)
            yield self._counter("faultline_driver_missed", "Open-loop starts that could not "
                                "be issued (the driver was saturated)", self._missed)
            errors = CounterMetricFamily("faultline_driver_errors", "Operations that failed",
                                         labels=["op", "class"])
            for (op, error_class), n in sorted(self._errors.items()):
                errors.add_metric([op, error_class], n)
            yield errors
            yield from self._histograms()
            last = GaugeMetricFamily("faultline_driver_last_sample_timestamp_seconds",
                                     "End of the newest closed second", labels=["op"])
            for op, ts in sorted(self._last_second.items()):
                last.add_metric([op], ts)
            yield last
        yield GaugeMetricFamily("faultline_driver_load_running", "1 while the load runs",
                                value=float(self.load_running))
        yield GaugeMetricFamily("faultline_driver_fault_active",
                                "1 from the fault's injection until its restore",
                                value=float(self.fault_active()))

    def fault_active(self) -> bool:
        return self.fault_from is not None and time.time() >= self.fault_from

    @staticmethod
    def _counter(name: str, text: str, values: dict[str, int]) -> Metric:
        family = CounterMetricFamily(name, text, labels=["op"])
        for op, n in sorted(values.items()):
            family.add_metric([op], n)
        return family

    def _histograms(self) -> Iterator[Metric]:
        family = HistogramMetricFamily(
            "faultline_driver_latency_seconds",
            "Operation latency from its intended start (open loop)", labels=["op"])
        for op, histogram in sorted(self._latency.items()):
            buckets = cumulative_buckets(histogram)
            total_s = histogram.get_mean_value() * histogram.get_total_count() / 1e6
            family.add_metric([op], buckets, total_s)
        yield family


def cumulative_buckets(histogram: HdrHistogram) -> list[tuple[str, int]]:
    """Prometheus buckets (upper bound, count of values at or below it) of an HDR histogram
    of microseconds; the last is +Inf with the total."""
    bounds_us = [b * 1e6 for b in BUCKETS_S]
    counts = [0] * len(bounds_us)
    for item in histogram.get_recorded_iterator():
        value = histogram.get_highest_equivalent_value(item.value_iterated_to)
        for i, bound in enumerate(bounds_us):
            if value <= bound:
                counts[i] += item.count_at_value_iterated_to
    out = [(repr(b), n) for b, n in zip(BUCKETS_S, counts, strict=True)]
    out.append(("+Inf", histogram.get_total_count()))
    return out


def serve(metrics: DriverMetrics, addr: str = "127.0.0.1", port: int = 0) -> tuple[object, str]:
    """Serve `metrics` alone on addr:port (0: any free port). Returns (server, its URL);
    server.shutdown() stops it."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(metrics)
    server, _thread = start_http_server(port, addr=addr, registry=registry)
    host, bound = server.server_address[:2]
    return server, f"http://{host}:{bound}/metrics"
