"""P2: the load generator's CPU per operation (user + sys of its process / operations) at
an open loop of 300 ops/s, 4 KiB, 80/15/5, on each lab, beside the CPU per operation of
the lab's own daemons over the same window. Targets: <= 0.3 ms per op; on Swift, <= 1/10
of the servers' CPU per op.

    .venv/bin/python -m bench.p2_cpu [--seconds 60] [--rate 300] [--swift-rate 300] [--json F]
"""

from __future__ import annotations

from . import labs
from .load import run_load
from .p3_openloop import capacity
from .results import Row, arguments, report

TARGET_MS = 0.3
WORKLOAD = {"containers": 2, "objects_per_container": 100, "object_size": 4096,
            "mix": {"read": 80, "write": 15, "delete": 5}, "ramp_s": 0, "baseline_s": 1}


def measure(kind: str, rate: float, seconds: float) -> list[Row]:
    cluster = labs.cluster(kind)
    note = ""
    cap = capacity(cluster)
    if rate > 0.8 * cap:  # beyond it the load would only measure a queue growing
        note = (f"{rate:g} ops/s is beyond what the {kind} lab serves here (capacity "
                f"{cap:.0f} ops/s of this mix, closed loop 16): measured at 80% of it")
        rate = round(0.8 * cap, 1)
        print(note, flush=True)
    result = run_load(cluster, {**WORKLOAD, "rate": rate}, seconds)
    ours = result.cpu_s / result.ops * 1000
    theirs = result.server_cpu_s / result.ops * 1000
    detail = {"rate": rate, "capacity_ops_s": round(cap, 1),
              "achieved_ops_s": round(result.rate, 1), "ops": result.ops,
              "errors": result.errors, "missed": result.missed,
              "generator_cpu_s": round(result.cpu_s, 2),
              "server_cpu_s": round(result.server_cpu_s, 2),
              "p99_ms": result.latency_ms(99)}
    print(f"{kind}: {result.rate:.1f} ops/s achieved of {rate:g}; generator "
          f"{ours:.3f} ms CPU/op, servers {theirs:.3f} ms CPU/op", flush=True)
    short = result.rate < 0.95 * rate
    gap = (f"the {kind} lab completed only {result.rate:.0f} of {rate:g} ops/s "
           "on this machine's 2 shared cores" if short else note)
    rows = [Row(f"P2-{kind}", f"generator CPU per op, open loop {rate:g} ops/s, 80/15/5",
                ours, "ms", theirs, f"{kind} servers' CPU per op", f"<= {TARGET_MS} ms",
                ours <= TARGET_MS and not short,
                gap or ("" if ours <= TARGET_MS else "see bench/README.md"), detail)]
    if kind == "swift":
        met = ours <= theirs / 10
        rows.append(Row("P2-swift", "generator CPU per op against the servers'", ours, "ms",
                        theirs, "Swift servers' CPU per op", "<= 1/10 of the servers'", met,
                        "" if met else "see bench/README.md", detail))
    return rows


def main() -> None:
    parser = arguments(__doc__)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--rate", type=float, default=300.0)
    parser.add_argument("--swift-rate", type=float, default=None,
                        help="the Swift lab's rate (default: --rate)")
    parser.add_argument("--only", choices=["ceph", "swift"])
    args = parser.parse_args()
    rows = []
    for kind in ("ceph", "swift"):
        if args.only in (None, kind):
            rate = args.swift_rate if kind == "swift" and args.swift_rate else args.rate
            rows += measure(kind, rate, args.seconds)
    report(rows, args.json)


if __name__ == "__main__":
    main()
