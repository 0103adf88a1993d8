"""P1-ceph: closed loop, 16 in flight, 4 KiB write then read, on the Ceph lab: Faultline's
librados driver against `rados bench -t 16 -b 4096` (write, then rand), alternating A B
A B, in the same session. Target: >= 0.95x rados bench's ops/s for both operations.

Measured twice: with the lab's daemons and the client on CPUs of their own (bench/cpus.py),
as a load generator and its cluster are on separate hosts, which is what the target asks
(is the generator ever the limit?); then sharing both CPUs, where the client's CPU per
operation is taken from the OSDs, and a Python client pays for being costlier than a C++
one. Each row gives both clients' CPU per operation.

    .venv/bin/python -m bench.p1_ceph [--pairs 3] [--seconds 10] [--json FILE]
"""

from __future__ import annotations

import re
import resource
import subprocess
import time
from collections.abc import Callable

from . import labs
from .cpus import separate_cpus
from .load import write_then_read
from .results import Row, arguments, median, report

IN_FLIGHT = 16
SIZE = 4096
TARGET = 0.95


Measured = tuple[dict[str, float], dict[str, float]]  # ops/s, client CPU ms per op


def faultline(cluster, seconds: float) -> Measured:
    """Faultline's closed loop: a write phase, then a read phase of what it wrote."""
    cpu_ms: dict[str, float] = {}
    rates = write_then_read(cluster, "rados", seconds, IN_FLIGHT, SIZE, 1, cpu_ms)
    return rates, cpu_ms


def rados_bench(cluster, seconds: float) -> Measured:
    conf, pool = cluster.client["conf"], cluster.client.get("pool", "faultline")
    run = f"faultline-p1-{time.time_ns()}"
    base = ["rados", "-c", conf, "-p", pool]
    rates: dict[str, float] = {}
    cpu_ms: dict[str, float] = {}
    try:
        for op, mode, extra in (("write", "write", ["-b", str(SIZE), "--no-cleanup"]),
                                ("read", "rand", [])):
            cpu0 = _children_cpu()
            rates[op] = _iops(base + ["bench", str(int(seconds)), mode, "-t", str(IN_FLIGHT),
                                      *extra, "--run-name", run])
            cpu_ms[op] = (_children_cpu() - cpu0) * 1000 / max(1.0, rates[op] * seconds)
        return rates, cpu_ms
    finally:
        subprocess.run(base + ["cleanup", "--run-name", run], capture_output=True, timeout=300)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _iops(command: list[str]) -> float:
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    found = re.search(r"Average IOPS:\s+([\d.]+)", done.stdout)
    if done.returncode != 0 or found is None:
        raise RuntimeError(f"{' '.join(command)} failed: {done.stdout[-500:]}{done.stderr}")
    return float(found.group(1))


TOOLS: tuple[Callable[..., Measured], ...] = (faultline, rados_bench)


def pairs(cluster, count: int, seconds: float, label: str) -> dict[str, dict[str, list]]:
    """Each tool's ops/s and CPU per op of each operation, over `count` pairs."""
    keys = ("write", "read", "write_cpu_ms", "read_cpu_ms")
    found = {tool.__name__: {key: [] for key in keys} for tool in TOOLS}
    for pair in range(count):  # A B, then B A: neither always runs on a warmer cluster
        for tool in TOOLS if pair % 2 == 0 else TOOLS[::-1]:
            rates, cpu_ms = tool(cluster, seconds)
            for op in ("write", "read"):
                found[tool.__name__][op].append(rates[op])
                found[tool.__name__][f"{op}_cpu_ms"].append(cpu_ms[op])
            print(f"{label}, pair {pair + 1}: {tool.__name__}: write {rates['write']:.0f} ops/s "
                  f"({cpu_ms['write']:.3f} ms CPU/op), read {rates['read']:.0f} ops/s "
                  f"({cpu_ms['read']:.3f} ms CPU/op)", flush=True)
    return found


def rows_of(found: dict[str, dict[str, list]], count: int, seconds: float, label: str,
            judged: bool, cpus: str) -> list[Row]:
    rows = []
    ours, theirs = found["faultline"], found["rados_bench"]
    for op in ("write", "read"):
        value, reference = median(ours[op]), median(theirs[op])
        met = value >= TARGET * reference if judged else None
        cpu = (f"client CPU per op {median(ours[f'{op}_cpu_ms']):.3f} ms, rados bench's "
               f"{median(theirs[f'{op}_cpu_ms']):.3f} ms")
        gap = cpu if met in (None, True) else f"{cpu}; see the note in bench/README.md"
        rows.append(Row(
            "P1-ceph", f"closed loop {IN_FLIGHT} in flight, 4 KiB {op}, {label}, median of "
            f"{count} pairs", value, "ops/s", reference, "rados bench",
            f">= {TARGET}x" if judged else "(for information)", met, gap,
            {"faultline": ours[op], "rados_bench": theirs[op], "seconds": seconds,
             "cpus": cpus, "faultline_cpu_ms_per_op": ours[f"{op}_cpu_ms"],
             "rados_bench_cpu_ms_per_op": theirs[f"{op}_cpu_ms"]}))
    return rows


def main() -> None:
    parser = arguments(__doc__)
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()
    cluster = labs.cluster("ceph")
    with separate_cpus("ceph") as (servers, client):
        label = f"cluster on CPU {servers}, client on CPU {client}"
        found = pairs(cluster, args.pairs, args.seconds, label)
    rows = rows_of(found, args.pairs, args.seconds, label, True, "separate")
    label = "cluster and client sharing every CPU"
    rows += rows_of(pairs(cluster, args.pairs, args.seconds, label), args.pairs, args.seconds,
                    label, False, "shared")
    report(rows, args.json)


if __name__ == "__main__":
    main()
