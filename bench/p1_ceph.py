"""P1-ceph: closed loop, 16 in flight, 4 KiB write then read, on the Ceph lab: Faultline's
librados driver against `rados bench -t 16 -b 4096` (write, then rand), alternating A B
A B, in the same session. Target: >= 0.95x rados bench's ops/s for both operations.

    .venv/bin/python -m bench.p1_ceph [--pairs 3] [--seconds 10] [--json FILE]
"""

from __future__ import annotations

import re
import subprocess
import time

from . import labs
from .load import write_then_read
from .results import Row, arguments, median, report

IN_FLIGHT = 16
SIZE = 4096
TARGET = 0.95


def faultline(cluster, seconds: float) -> dict[str, float]:
    """ops/s of Faultline's closed loop: a write phase, then a read phase of what it wrote."""
    return write_then_read(cluster, "rados", seconds, IN_FLIGHT, SIZE, 1)


def rados_bench(cluster, seconds: float) -> dict[str, float]:
    conf, pool = cluster.client["conf"], cluster.client.get("pool", "faultline")
    run = f"faultline-p1-{time.time_ns()}"
    base = ["rados", "-c", conf, "-p", pool]
    try:
        write = _iops(base + ["bench", str(int(seconds)), "write", "-t", str(IN_FLIGHT),
                              "-b", str(SIZE), "--no-cleanup", "--run-name", run])
        read = _iops(base + ["bench", str(int(seconds)), "rand", "-t", str(IN_FLIGHT),
                             "--run-name", run])
        return {"write": write, "read": read}
    finally:
        subprocess.run(base + ["cleanup", "--run-name", run], capture_output=True, timeout=300)


def _iops(command: list[str]) -> float:
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    found = re.search(r"Average IOPS:\s+([\d.]+)", done.stdout)
    if done.returncode != 0 or found is None:
        raise RuntimeError(f"{' '.join(command)} failed: {done.stdout[-500:]}{done.stderr}")
    return float(found.group(1))


def main() -> None:
    parser = arguments(__doc__)
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()
    cluster = labs.cluster("ceph")
    ours: dict[str, list[float]] = {"write": [], "read": []}
    theirs: dict[str, list[float]] = {"write": [], "read": []}
    for pair in range(args.pairs):  # A B, then B A: neither always runs on a warmer cluster
        order = [faultline, rados_bench] if pair % 2 == 0 else [rados_bench, faultline]
        for tool in order:
            rates = tool(cluster, args.seconds)
            side = ours if tool is faultline else theirs
            for op, rate in rates.items():
                side[op].append(rate)
            print(f"pair {pair + 1}: {tool.__name__}: write {rates['write']:.0f} ops/s, "
                  f"read {rates['read']:.0f} ops/s", flush=True)
    rows = []
    for op in ("write", "read"):
        value, reference = median(ours[op]), median(theirs[op])
        met = value >= TARGET * reference
        rows.append(Row(
            "P1-ceph", f"closed loop {IN_FLIGHT} in flight, 4 KiB {op}, median of "
            f"{args.pairs} pairs", value, "ops/s", reference, "rados bench", f">= {TARGET}x",
            met, "" if met else "see the note in bench/README.md",
            {"faultline": ours[op], "rados_bench": theirs[op], "seconds": args.seconds}))
    report(rows, args.json)


if __name__ == "__main__":
    main()
