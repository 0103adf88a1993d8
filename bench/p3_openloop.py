"""P3: open-loop accuracy. The capacity of the lab is measured first (closed loop, 16 in
flight, 4 KiB, 80/15/5); then an open loop at half of it for 60 s: the rate achieved and
the schedule lag (actual submit - intended start) p50/p99; then the same load with a 2 s
stall injected (SIGSTOP, then SIGCONT, of every OSD of the Ceph lab, or of the Swift
proxy): the p99 and max latency reported must show the stall (latency counts from the
intended start: no coordinated omission). Targets: rate within 1%, lag p99 < 5 ms, the
stall >= 2 s in the max (the p99 of the seconds it ended in is in the detail). The stall
must also show in the run's figures, computed from its samples as a run's are
(service.results.analysis, the stall as the fault): every start the open loop could not
issue is an error of class `not started` (the stalled load allows half the stall's starts in
flight, so some must be missed), and the deficit is at least the stall less the
1 s an operation may wait and still be on time (5% allowed for the baseline's own noise),
however much of it the catch-up burst after the SIGCONT washed out of the mean drop.

    .venv/bin/python -m bench.p3_openloop [--only ceph|swift] [--seconds 60] [--json FILE]
"""

from __future__ import annotations

import os
import signal
import statistics
import time

from loadgen.samples import Sample, merge_histograms
from service.results.analysis import Second, Timeline, analyze
from service.results.deficit import ON_TIME_S

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
        self.stopped_wall: float | None = None  # the stall's start, as the samples' clock
        self.resumed = False

    def __call__(self, elapsed: float) -> None:
        if self.stopped_at is None and elapsed >= self.at_s:
            self.stopped_wall = time.time()
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
        # at most half the stall's starts may wait: the others must be missed starts, whatever
        # the capacity (at 1,024 in flight a slow lab's stall misses none)
        stalled = run_load(cluster, {**WORKLOAD, "rate": rate,
                                     "max_in_flight": max(1, int(rate * STALL_S / 2))},
                           25.0, during=stall)
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
    rows.append(stall_in_figures(kind, stalled.samples, stall.stopped_wall))
    return rows


def seconds_of(samples: list[Sample]) -> list[Second]:
    """The load's seconds summed over op types, as a run's figures read them from the
    database (service.results.figures.seconds_of)."""
    by_ts: dict[float, list[Sample]] = {}
    for s in samples:
        by_ts.setdefault(s.ts, []).append(s)
    out = []
    for ts, group in sorted(by_ts.items()):
        by_class: dict[str, int] = {}
        for s in group:
            for cls, n in s.errors.items():
                by_class[cls] = by_class.get(cls, 0) + n
        out.append(Second(
            ts=ts, ops=sum(s.ops for s in group), bytes=sum(s.bytes for s in group),
            errors=sum(s.error_count for s in group), errors_by_class=by_class,
            histograms=tuple(s.histogram for s in group if s.histogram),
            errors_by_op={s.op: s.error_count for s in group if s.error_count},
            missed=sum(s.missed for s in group),
            missed_by_op={s.op: s.missed for s in group if s.missed}))
    return out


def stall_in_figures(kind: str, samples: list[Sample], stopped_wall: float | None) -> Row:
    """The stall as the run's figures show it, the stall taken as the fault."""
    what = (f"a {STALL_S:g} s stall in the figures: deficit (every missed start an error "
            "of class 'not started')")
    target = f">= {0.95 * (STALL_S - ON_TIME_S):g} s; missed starts, all 'not started'"
    if stopped_wall is None or not samples:
        return Row(f"P3-{kind}", what, None, "s", target=target, met=False,
                   gap="the stall did not happen")
    seconds = seconds_of(samples)
    end = seconds[-1].ts + 1
    f = analyze(seconds, [], Timeline(load_start=seconds[0].ts, fault=stopped_wall, end=end))
    missed = sum(s.missed for s in seconds if s.ts + 1 > stopped_wall)
    not_started = f["errors_by_class"].get("not started", 0)
    met = (f["deficit_s"] is not None and f["deficit_s"] >= 0.95 * (STALL_S - ON_TIME_S)
           and missed > 0 and not_started == missed)
    return Row(f"P3-{kind}", what, f["deficit_s"], "s", target=target, met=met,
               gap="" if met else "see bench/README.md",
               detail={"deficit_ops": f["deficit_ops"], "offered_ops": f.get("offered_ops"),
                       "missed_starts": missed, "errors_not_started": not_started,
                       "errors": f["errors"], "throughput_drop": f["throughput_drop"],
                       "worst_second_drop": f["worst_second_drop"],
                       "time_to_client_recovery_s": f["time_to_client_recovery_s"],
                       "reasons": f["reasons"]})


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
