"""P3: open-loop accuracy. The capacity of the lab is measured first (closed loop, 16 in
flight, 4 KiB, 80/15/5); then an open loop at half of it for 60 s: the rate achieved and
the schedule lag (actual submit - intended start) p50/p99; then the same load with a 2 s
stall injected (SIGSTOP, then SIGCONT, of every OSD of the Ceph lab, or of the Swift
proxy): the p99 and max latency reported must show the stall (latency counts from the
intended start: no coordinated omission). Targets: rate within 1%, lag p99 < 5 ms, the
stall >= 2 s in the max (the p99 of the seconds it ended in is in the detail).

    .venv/bin/python -m bench.p3_openloop [--only ceph|swift] [--seconds 60] [--json FILE]
"""

from __future__ import annotations

import os
import signal
import statistics
import time

from loadgen.samples import merge_histograms

from . import labs
from .load import lab_pids, run_load
from .results import Row, arguments, percentile, report

WORKLOAD = {"containers": 2, "objects_per_container": 100, "object_size": 4096,
            "mix": {"read": 80, "write": 15, "delete": 5}, "ramp_s": 0, "baseline_s": 1}
STALL_S = 2.0
STALLED = {"ceph": ("ceph-osd",), "swift": ("swift-proxy-server",)}


def capacity(cluster) -> float:
    result = run_load(cluster, {**WORKLOAD, "workers": 16}, 10.0)
    return result.rate


class Stall:
    """SIGSTOP these processes at `at_s` into the load, SIGCONT them STALL_S later (and in
    any case when the load ends)."""

    def __init__(self, pids: list[int], at_s: float):
        self.pids, self.at_s = pids, at_s
        self.stopped_at: float | None = None
        self.resumed = False

    def __call__(self, elapsed: float) -> None:
        if self.stopped_at is None and elapsed >= self.at_s:
            for pid in self.pids:
                os.kill(pid, signal.SIGSTOP)
            self.stopped_at = time.monotonic()
        elif self.stopped_at is not None and not self.resumed \
                and time.monotonic() - self.stopped_at >= STALL_S:
            self.resume()

    def resume(self) -> None:
        if self.stopped_at is not None and not self.resumed:
            for pid in self.pids:
                os.kill(pid, signal.SIGCONT)
            self.resumed = True


def measure(kind: str, seconds: float) -> list[Row]:
    cluster = labs.cluster(kind)
    cap = capacity(cluster)
    rate = round(cap / 2, 1)
    print(f"{kind}: capacity {cap:.0f} ops/s (closed loop, 16 in flight); open loop at "
          f"{rate:g} ops/s", flush=True)
    steady = run_load(cluster, {**WORKLOAD, "rate": rate}, seconds)
    achieved = steady.submitted / steady.seconds
    lag_ms = [lag * 1000 for lag in steady.lag_s]
    p50, p99 = statistics.median(lag_ms), percentile(lag_ms, 99)
    rate_met = abs(achieved / rate - 1) <= 0.01
    rows = [
        Row(f"P3-{kind}", f"open loop at 50% of capacity ({rate:g} ops/s) for {seconds:g} s: "
            "operations started per second", achieved, "ops/s", rate, "the target rate",
            "within 1%", rate_met, "" if rate_met else "see bench/README.md",
            {"capacity_ops_s": round(cap, 1), "completed_ops_s": round(steady.rate, 1),
             "errors": steady.errors, "missed": steady.missed}),
        Row(f"P3-{kind}", "schedule lag p99 (p50 in detail)", p99, "ms", target="< 5 ms",
            met=p99 < 5, gap="" if p99 < 5 else "see bench/README.md",
            detail={"lag_p50_ms": round(p50, 3), "lag_max_ms": round(max(lag_ms), 3)}),
    ]
    pids = lab_pids(kind, STALLED[kind])
    if not pids:
        raise RuntimeError(f"no {STALLED[kind]} process of the {kind} lab found to stall")
    stall = Stall(pids, at_s=10.0)
    try:
        stalled = run_load(cluster, {**WORKLOAD, "rate": rate}, 25.0, during=stall)
    finally:
        stall.resume()
    worst = stalled.max_latency_ms()
    # the seconds in which the stalled operations completed: right after the SIGCONT
    seconds_of_stall = sorted(stalled.samples, key=lambda s: s.max_ms or 0)[-3:]
    p99_stall = merge_histograms([s.histogram for s in seconds_of_stall]
                                 ).get_value_at_percentile(99) / 1000
    met = worst >= STALL_S * 1000
    rows.append(Row(f"P3-{kind}", f"a {STALL_S:g} s stall ({', '.join(STALLED[kind])} "
                    "SIGSTOPped): max latency reported", worst, "ms",
                    target=f">= {STALL_S * 1000:g} ms", met=met,
                    gap="" if met else "see bench/README.md",
                    detail={"p99_of_the_stall_seconds_ms": p99_stall,
                            "p99_of_the_whole_load_ms": stalled.latency_ms(99),
                            "stopped_pids": len(pids), "errors": stalled.errors,
                            "missed": stalled.missed}))
    return rows


def main() -> None:
    parser = arguments(__doc__)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--only", choices=["ceph", "swift"])
    args = parser.parse_args()
    rows = []
    for kind in ("ceph", "swift"):
        if args.only in (None, kind):
            rows += measure(kind, args.seconds)
    report(rows, args.json)


if __name__ == "__main__":
    main()
