"""P1-ceph: closed loop, 16 in flight, 4 KiB write then read, on the Ceph lab: Faultline's
librados driver against `rados bench -t 16 -b 4096` (write, then rand), in the same session.
Target: >= 0.95x rados bench's ops/s for both operations, and client CPU per operation
<= 1.3x rados bench's.

A ratio is judged per pair (bench/pairs.py): each tool runs twice, A B B A (the next pair
B A A B), back to back, on a whole cluster (every OSD up and in, every PG active+clean,
before each pair and after the last). The pair's ratio is its two runs' ops over the other
tool's two (CPU: its CPU per op over the other's); the row gives the median of the pairs'
ratios with an exact order-statistic interval for it (results.median_interval; 32 pairs: the
10th to the 23rd, which covers the median with 95%), and "met" asks the interval's
unfavourable end, not the median, to clear the target. At least 5 pairs for a verdict.

`--aa` adds the A/A check: rados bench against itself by the same pairs. Its interval is
what the method gives where there is no difference, on this machine, at this moment; a
target band narrower than it cannot be shown here.

Measured twice: with the lab's daemons and the client on CPUs of their own (bench/cpus.py),
as a load generator and its cluster are on separate hosts, which is what the target asks
(is the generator ever the limit?); then sharing both CPUs, where the client's CPU per
operation is taken from the OSDs, and a Python client pays for being costlier than a C++
one. Each row gives both clients' CPU per operation, and which closed loop ran (librados'
C path, loadgen/rados_ring.c, unless it is not built).

    .venv/bin/python -m bench.p1_ceph [--pairs 32] [--info-pairs 8] [--seconds 10] [--aa]
        [--separate-only] [--json FILE]
"""

from __future__ import annotations

import os
import re
import resource
import socket
import subprocess
import time

from loadgen import rados_ring

from . import labs
from .cpus import separate_cpus
from .load import condition, write_then_read_kept
from .pairs import Cleanup, Tool, pairs
from .pairs import aa_rows as pair_aa_rows
from .results import Row, arguments, fail, median, median_interval, report

IN_FLIGHT = 16
SIZE = 4096
TARGET = 0.95
CPU_TARGET = 1.3  # at most this times rados bench's client CPU per operation
MIN_PAIRS = 5  # fewer give no verdict: min to max of 4 covers the median only 87.5%
CONFIDENCE = 0.9
ENGINE = ("librados' C path (loadgen/rados_ring.c)" if rados_ring.available()
          else "python-rados (loadgen/rados_ring.c is not built)")



def faultline(cluster, seconds: float) -> tuple[dict[str, float], dict[str, float], Cleanup]:
    """Faultline's closed loop: a write phase, then a read phase of what it wrote."""
    cpu_ms: dict[str, float] = {}
    rates, remove = write_then_read_kept(cluster, "rados", seconds, IN_FLIGHT, SIZE, 1, cpu_ms)
    return rates, cpu_ms, remove


def rados_bench(cluster, seconds: float) -> tuple[dict[str, float], dict[str, float], Cleanup]:
    conf, pool = cluster.client["conf"], cluster.client.get("pool", "faultline")
    run = f"faultline-p1-{time.time_ns()}"
    base = ["rados", "-c", conf, "-p", pool]
    rates: dict[str, float] = {}
    cpu_ms: dict[str, float] = {}
    pids: list[int] = []  # each `rados bench` child's: its objects are named after it

    def remove() -> None:
        subprocess.run(base + ["cleanup", "--run-name", run], capture_output=True, timeout=300)
        # a write that was interrupted wrote no run metadata for that cleanup to find
        for pid in pids:
            subprocess.run(base + ["cleanup", "--prefix",
                                   f"benchmark_data_{socket.gethostname()}_{pid}"],
                           capture_output=True, timeout=300)
        subprocess.run(base + ["rm", run], capture_output=True, timeout=60)

    try:
        # Faultline's CPU is counted over its load alone; rados bench's process also starts,
        # connects and shuts down: what one `rados stat` costs is taken off each phase.
        startup = _startup_cpu(base)
        for op, mode, extra in (("write", "write", ["-b", str(SIZE), "--no-cleanup"]),
                                ("read", "rand", [])):
            cpu0 = _children_cpu()
            rates[op] = _iops(base + ["bench", str(int(seconds)), mode, "-t", str(IN_FLIGHT),
                                      *extra, "--run-name", run], pids)
            spent = max(0.0, _children_cpu() - cpu0 - startup)
            cpu_ms[op] = spent * 1000 / max(1.0, rates[op] * seconds)
    except BaseException:
        remove()
        raise
    return rates, cpu_ms, remove


def rados_bench_again(cluster, seconds: float
                      ) -> tuple[dict[str, float], dict[str, float], Cleanup]:
    """rados bench as the other tool of the A/A check: the method against no difference."""
    return rados_bench(cluster, seconds)


def _startup_cpu(base: list[str]) -> float:
    """CPU seconds of a `rados` process that connects, stats one absent object and exits."""
    cpu0 = _children_cpu()
    subprocess.run(base + ["stat", "faultline-p1-absent"], capture_output=True, timeout=60)
    return _children_cpu() - cpu0


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _iops(command: list[str], pids: list[int]) -> float:
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True) as child:
        pids.append(child.pid)
        try:
            stdout, stderr = child.communicate(timeout=600)
        except BaseException:
            child.kill()
            raise
    found = re.search(r"Average IOPS:\s+([\d.]+)", stdout)
    if child.returncode != 0 or found is None:
        raise RuntimeError(f"{' '.join(command)} failed: {stdout[-500:]}{stderr}")
    return float(found.group(1))


TOOLS: tuple[Tool, Tool] = (faultline, rados_bench)
AA_TOOLS: tuple[Tool, Tool] = (rados_bench, rados_bench_again)


def measure(cluster, count: int, seconds: float, label: str,
            tools: tuple[Tool, Tool]) -> dict[str, dict[str, list]]:
    return pairs(cluster, "ceph", count, seconds, label, tools,
                 lambda when: require_whole(cluster, when))


def require_whole(cluster, when: str) -> None:
    """Stop the benchmark, reporting nothing, if the Ceph lab is not whole (P1-s3's too)."""
    problem = labs.ceph_not_whole(cluster)
    if problem:
        fail(f"the Ceph lab is not whole {when}: {problem}. Figures of a degraded lab are "
             "not P1's; nothing is reported (bring it back, or `faultline lab down ceph "
             "--purge` and up)")


def rows_of(found: dict[str, dict[str, list]], count: int, seconds: float, label: str,
            judged: bool, cpus: str, load: tuple[float, float]) -> list[Row]:
    """Per operation, a throughput row and a CPU row, each from the pairs' ratios."""
    rows = []
    ours, theirs = found["faultline"], found["rados_bench"]
    judged = judged and count >= MIN_PAIRS
    target = "(for information)" if not judged else None
    for op in ("write", "read"):
        ratios = [a / b for a, b in zip(ours[op], theirs[op], strict=True)]
        low, high, coverage = median_interval(ratios, CONFIDENCE)
        cpu_key = f"{op}_cpu_ms"
        cpu_ratios = [a / b for a, b in zip(ours[cpu_key], theirs[cpu_key], strict=True)]
        cpu_low, cpu_high, _ = median_interval(cpu_ratios, CONFIDENCE)
        spread = (f"pair ratios' median {median(ratios):.3f}, {coverage:.2%} interval "
                  f"{low:.3f}-{high:.3f}; load average {load[0]:.1f} then {load[1]:.1f}")
        detail = {"faultline": ours[op], "rados_bench": theirs[op], "seconds": seconds,
                  "cpus": cpus, "load_average": list(load), "pair_ratios": ratios,
                  "ratio_median": median(ratios), "ratio_low": low, "ratio_high": high,
                  "coverage": coverage, "faultline_cpu_ms_per_op": ours[cpu_key],
                  "rados_bench_cpu_ms_per_op": theirs[cpu_key], "cpu_ratios": cpu_ratios,
                  "cpu_ratio_median": median(cpu_ratios), "cpu_ratio_low": cpu_low,
                  "cpu_ratio_high": cpu_high, "runs_per_pair": 2,
                  "idle_wait_s": found["pair"]["idle_wait_s"],
                  "closed_loop": ENGINE}
        met = low >= TARGET if judged else None
        rows.append(Row(
            "P1-ceph", f"closed loop {IN_FLIGHT} in flight, 4 KiB {op}, {label}, median of "
            f"{count} pairs of 2 runs each ({spread})", median(ours[op]), "ops/s",
            median(theirs[op]),
            "rados bench", target or f">= {TARGET}x at the interval's low end", met,
            "" if met in (None, True) else f"the interval's low end is {low:.3f}x", detail))
        met = cpu_high <= CPU_TARGET if judged else None
        rows.append(Row(
            "P1-ceph", f"client CPU per 4 KiB {op}, {label}, median of {count} pairs of 2 "
            f"runs each (pair ratios' median {median(cpu_ratios):.3f}, {coverage:.2%} interval "
            f"{cpu_low:.3f}-{cpu_high:.3f})", median(ours[cpu_key]), "ms",
            median(theirs[cpu_key]), "rados bench",
            target or f"<= {CPU_TARGET}x at the interval's high end", met,
            "" if met in (None, True) else f"the interval's high end is {cpu_high:.3f}x",
            detail))
    return rows


def aa_rows(found: dict[str, dict[str, list]], count: int, seconds: float,
            label: str) -> list[Row]:
    """The A/A check: rados bench against itself by the same pairs."""
    return pair_aa_rows(found, "rados_bench", "rados_bench_again", "P1-ceph-aa",
                        f"A/A: rados bench against itself, 4 KiB {{op}}, {label}",
                        "rados bench", count, seconds, CONFIDENCE)


def main() -> None:
    parser = arguments(__doc__)
    # 32 pairs: the A/A check's pair ratios spread about +-5% on this machine (8 pairs gave
    # an interval of 0.93-1.04), and the median's interval narrows as 1/sqrt(pairs)
    parser.add_argument("--pairs", type=int, default=32,
                        help="pairs of the judged condition and of the A/A check")
    parser.add_argument("--info-pairs", type=int, default=8,
                        help="pairs of the for-information run sharing every CPU")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--separate-only", action="store_true",
                        help="skip the for-information run sharing every CPU")
    parser.add_argument("--aa", action="store_true",
                        help="also rados bench against itself, client on its own CPU")
    args = parser.parse_args()
    cluster = labs.cluster("ceph")
    quiet = condition("ceph")
    with separate_cpus("ceph") as (servers, client):
        label = f"{quiet}, cluster on CPU {servers}, client on CPU {client}"
        before = os.getloadavg()[0]
        found = measure(cluster, args.pairs, args.seconds, label, TOOLS)
        load = (before, os.getloadavg()[0])
        rows = rows_of(found, args.pairs, args.seconds, label, True, "separate", load)
        if args.aa:
            found = measure(cluster, args.pairs, args.seconds, label, AA_TOOLS)
            rows += aa_rows(found, args.pairs, args.seconds, label)
    if not args.separate_only:
        label = f"{quiet}, cluster and client sharing every CPU"
        before = os.getloadavg()[0]
        found = measure(cluster, args.info_pairs, args.seconds, label, TOOLS)
        rows += rows_of(found, args.info_pairs, args.seconds, label, False, "shared",
                        (before, os.getloadavg()[0]))
    report(rows, args.json)


if __name__ == "__main__":
    main()
