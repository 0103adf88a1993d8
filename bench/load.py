"""Faultline's own load, in the benchmark's process, as a run drives it (LoadSession: the
driver, prefill, the open or closed loop, per-second samples), with what the benchmarks
measure around it: the process's CPU, the schedule lag, the merged latency histogram,
and the CPU of the lab's servers over the same window."""

from __future__ import annotations

import os
import resource
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from clusters.access.inventory import Cluster
from lab import ceph_layout, swift_layout
from loadgen.closedloop import closed_loop, ring_of
from loadgen.drivers import driver_for
from loadgen.ledger import Entry, Ledger
from loadgen.payload import PayloadSource
from loadgen.samples import Sample, SampleRecorder, merge_histograms
from loadgen.session import LoadSession
from loadgen.workload import OPS, parse_workload

TICKS = os.sysconf("SC_CLK_TCK")
LAB_HOMES = {"ceph": ceph_layout.default_home, "swift": swift_layout.default_home}


@dataclass
class LoadResult:
    seconds: float
    submitted: int
    ops: int
    errors: int
    missed: int
    cpu_s: float  # user + sys of this process over the load
    server_cpu_s: float  # user + sys of the lab's daemons over the same window
    lag_s: list[float]
    samples: list[Sample] = field(repr=False)

    @property
    def rate(self) -> float:
        return self.ops / self.seconds

    def latency_ms(self, percentile: float) -> float:
        histogram = merge_histograms([s.histogram for s in self.samples])
        return histogram.get_value_at_percentile(percentile) / 1000

    def max_latency_ms(self) -> float:
        return merge_histograms([s.histogram for s in self.samples]).get_max_value() / 1000


def lab_pids(kind: str, programs: tuple[str, ...] | None = None) -> list[int]:
    """The lab's daemons of this kind (their command line names the lab's home), read
    from /proc; optionally only those whose program (or script, for Swift's Python
    daemons) names one of `programs`."""
    home = str(LAB_HOMES[kind]()).encode()
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0") if entry.name.isdigit() else []
        except OSError:
            continue
        if any(home in a for a in argv) and (programs is None or any(
                p.encode() in a for a in argv[:2] for p in programs)):
            pids.append(int(entry.name))
    return pids


def cpu_of(pids: list[int]) -> float:
    """user + sys seconds of these processes so far (those gone since count nothing)."""
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / TICKS


def wait_idle(kind: str, below_cores: float = 0.15, calm_s: int = 2,
              limit_s: float = 60.0) -> float:
    """Wait until the `kind` lab's daemons have used less than `below_cores` over `calm_s`
    whole seconds in a row (what an earlier run's deletes and cleanup left them doing is
    over), at most `limit_s`; return the seconds waited."""
    started = time.monotonic()
    pids, calm = lab_pids(kind), 0
    while calm < calm_s and time.monotonic() - started < limit_s:
        before = cpu_of(pids)
        time.sleep(1.0)
        calm = calm + 1 if cpu_of(pids) - before < below_cores else 0
    return time.monotonic() - started


def condition(kind: str) -> str:
    """Which labs are up beside the `kind` lab measured: it alone ("quiet" in issue 30's
    terms), or both. What else loads the machine is not in it: the rows give the load
    average over the pairs."""
    other = "swift" if kind == "ceph" else "ceph"
    return "both labs up" if lab_pids(other) else f"only the {kind.capitalize()} lab up"


def own_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def run_load(cluster: Cluster, workload: dict, seconds: float, api: str | None = None,
             during: Callable[[float], None] | None = None,
             servers: list[int] | None = None) -> LoadResult:
    """Prefill, then `seconds` of load; `during(elapsed)` is called about every 0.1 s."""
    parsed = parse_workload({**workload, "duration_s": None})
    driver = driver_for(cluster, parsed, api)
    driver.connect()
    samples: list[Sample] = []
    session = LoadSession(driver, parsed, samples.extend, flush_every_s=1.0)
    try:
        if parsed.prefill:
            session.prefill()
        servers = servers if servers is not None else lab_pids(cluster.kind)
        cpu0, server0 = own_cpu(), cpu_of(servers)
        started = time.monotonic()
        session.start()
        while (elapsed := time.monotonic() - started) < seconds:
            if during is not None:
                during(elapsed)
            time.sleep(0.1)
        session.stop()
        elapsed = time.monotonic() - started
        cpu, server = own_cpu() - cpu0, cpu_of(servers) - server0
        loop = session.loop
        return LoadResult(
            seconds=elapsed, submitted=loop.submitted, ops=sum(s.ops for s in samples),
            errors=sum(s.error_count for s in samples), missed=sum(s.missed for s in samples),
            cpu_s=cpu, server_cpu_s=server, lag_s=list(loop.lag_s), samples=samples)
    finally:
        _clean(session, driver)


def _clean(session: LoadSession, driver) -> None:
    remove_all(driver, session.acknowledged())
    driver.close()


def remove_all(driver, entries: list[Entry]) -> None:
    """Delete these objects through the driver, all submitted at once, waiting for each."""
    left = threading.Semaphore(0)
    for entry in entries:
        driver.delete(entry.container, entry.name, lambda *_: left.release())
    for _ in entries:
        left.acquire(timeout=30)


def write_then_read(cluster: Cluster, api: str, seconds: float, in_flight: int, size: int,
                    containers: int = 1,
                    cpu_ms: dict[str, float] | None = None) -> dict[str, float]:
    """ops/s of Faultline's closed loop (`in_flight` always in flight): a write phase of
    `seconds`, then a read phase of what it wrote; everything written is deleted after.
    `cpu_ms`, if given, receives this process's CPU per operation of each phase (ms)."""
    rates, remove = write_then_read_kept(cluster, api, seconds, in_flight, size, containers,
                                         cpu_ms)
    remove()
    return rates


def write_then_read_kept(cluster: Cluster, api: str, seconds: float, in_flight: int,
                         size: int, containers: int = 1,
                         cpu_ms: dict[str, float] | None = None
                         ) -> tuple[dict[str, float], Callable[[], None]]:
    """write_then_read, leaving what it wrote in place: returns the rates and what deletes
    it (and closes the driver), to be called later, after runs that must not wait for it."""
    workload = parse_workload({"containers": containers, "objects_per_container": 1,
                               "object_size": size, "mix": {"write": 100}, "workers": in_flight,
                               "prefill": False, "duration_s": seconds})
    driver = driver_for(cluster, workload, api)
    driver.connect()  # Swift: authenticates and creates the workload's containers
    ledger, payloads = Ledger(workload.seed), PayloadSource(workload.seed, size, size)
    tag = f"p1-{time.time_ns()}"

    def remove() -> None:
        try:
            remove_all(driver, ledger.entries())
        finally:
            driver.close()

    try:
        ring_of(driver)  # librados' C path connects now, as rados bench's start-up is not counted
        rates = {}
        for op in ("write", "read"):
            phase = parse_workload({**workload.as_dict(), "mix": {op: 100}})
            cpu0 = own_cpu()
            rates[op] = _closed_phase(driver, phase, ledger, payloads, tag)
            if cpu_ms is not None:
                cpu_ms[op] = (own_cpu() - cpu0) * 1000 / max(1.0, rates[op] * seconds)
    except BaseException:
        remove()
        raise
    return rates, remove


def _closed_phase(driver, workload, ledger, payloads, tag) -> float:
    recorder = SampleRecorder(time.time(), time.monotonic())
    loop = closed_loop(driver, workload, recorder, ledger, payloads, name_prefix=tag)
    started = time.monotonic()
    loop.start()
    time.sleep(workload.duration_s)
    loop.stop()
    elapsed = time.monotonic() - started
    samples = recorder.take_all(time.monotonic(), OPS)
    errors = sum(s.error_count for s in samples)
    if errors:
        raise RuntimeError(f"{errors} errors in Faultline's {workload.mix} phase")
    return sum(s.ops for s in samples) / elapsed


def run_threads(work, conns, seconds: float | None) -> float:
    """Run work(i, conn, end) on one thread per connection; its total per second."""
    counts = [0] * len(conns)
    start = threading.Barrier(len(conns) + 1)

    def run(i: int) -> None:
        start.wait()
        counts[i] = work(i, conns[i], started + seconds if seconds else None)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(conns))]
    for thread in threads:
        thread.start()
    started = time.monotonic()
    start.wait()
    for thread in threads:
        thread.join()
    return sum(counts) / (time.monotonic() - started)
