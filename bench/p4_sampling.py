"""P4: sampling. Two worker processes, each a LoadSession with half the rate (its own
stream and phase, as two drivers of a run), load the Ceph lab for 10 minutes; each also
keeps every raw latency it recorded. Checked: a per-second sample for every second of the
load in each worker, and the percentiles of the workers' per-second HDR histograms merged
equal those of one histogram of all the raw latencies pooled (exact), and the exact
percentiles of the raw latencies within the histograms' precision (3 significant digits).

    .venv/bin/python -m bench.p4_sampling [--seconds 600] [--rate 200] [--json FILE]
"""

from __future__ import annotations

import multiprocessing
import time

from loadgen import session as session_module
from loadgen.drivers import driver_for
from loadgen.samples import SampleRecorder, merge_histograms, new_histogram
from loadgen.session import LoadSession
from loadgen.workload import parse_workload

from . import labs
from .load import remove_all
from .results import Row, arguments, percentile, report

WORKERS = 2
PERCENTILES = (50, 90, 99, 99.9, 100)
WORKLOAD = {"containers": 2, "objects_per_container": 50, "object_size": 4096,
            "mix": {"read": 80, "write": 15, "delete": 5}}


class RawRecorder(SampleRecorder):
    """The load's recorder, also keeping each raw latency (microseconds, as recorded)."""

    raw: list[int] = []

    def success(self, op, done_mono, latency_s, nbytes):
        RawRecorder.raw.append(int(latency_s * 1e6))
        super().success(op, done_mono, latency_s, nbytes)


def worker(index: int, rate: float, seconds: float, start_at: float, out) -> None:
    session_module.SampleRecorder = RawRecorder  # this process only
    cluster = labs.cluster("ceph")
    workload = parse_workload({**WORKLOAD, "rate": rate / WORKERS})
    driver = driver_for(cluster, workload, "rados")
    driver.connect()
    samples = []
    load = LoadSession(driver, workload, samples.extend, tag=f"p4-{index}-{time.time_ns()}",
                       stream=index, phase_s=index / rate)
    try:
        load.prefill()
        load.start(at=start_at)
        time.sleep(max(0.0, start_at + seconds - time.time()))
        load.stop()
        out.send({"samples": [(s.second, s.op, s.ops, s.histogram) for s in samples],
                  "raw": RawRecorder.raw})
    finally:
        remove_all(driver, load.acknowledged())
        driver.close()


def main() -> None:
    parser = arguments(__doc__)
    parser.add_argument("--seconds", type=float, default=600.0)
    parser.add_argument("--rate", type=float, default=200.0)
    args = parser.parse_args()
    labs.cluster("ceph")
    spawn = multiprocessing.get_context("spawn")  # librados does not survive a fork
    start_at = time.time() + 15  # time for both to connect and prefill
    pipes, processes = [], []
    for index in range(WORKERS):
        receive, send = spawn.Pipe(duplex=False)
        process = spawn.Process(target=worker, args=(index, args.rate, args.seconds, start_at,
                                                     send))
        process.start()
        pipes.append(receive)
        processes.append(process)
    results = [pipe.recv() for pipe in pipes]
    for process in processes:
        process.join()
    expected = int(args.seconds)
    missing = []
    for index, result in enumerate(results):
        seconds = {second for second, *_ in result["samples"]}
        missing += [(index, s) for s in range(expected) if s not in seconds]
    merged = merge_histograms([blob for r in results for *_, blob in r["samples"]])
    pooled_raw = sorted(v for r in results for v in r["raw"])
    pooled = new_histogram()
    for value in pooled_raw:
        pooled.record_value(value)
    table = {}
    for p in PERCENTILES:
        exact = percentile(pooled_raw, p)
        table[str(p)] = {"merged_us": merged.get_value_at_percentile(p),
                         "pooled_hdr_us": pooled.get_value_at_percentile(p),
                         "raw_us": exact}
        print(f"p{p}: merged {table[str(p)]['merged_us']} us, pooled "
              f"{table[str(p)]['pooled_hdr_us']} us, raw {exact} us", flush=True)
    exact_merge = all(t["merged_us"] == t["pooled_hdr_us"] for t in table.values()) \
        and merged.get_total_count() == len(pooled_raw)
    # 3 significant digits: a bucket spans 1/1024 of its value; one rank either side
    within = all(abs(t["merged_us"] - t["raw_us"]) <= max(1, t["raw_us"] * 0.002)
                 for t in table.values())
    rows = [
        Row("P4", f"seconds missing from {WORKERS} workers' samples over {expected} s",
            len(missing), "s", target="0", met=not missing, gap="" if not missing else
            f"missing (worker, second): {missing[:10]}",
            detail={"seconds": expected, "ops": len(pooled_raw)}),
        Row("P4", "merged percentiles = pooled raw latencies' (p50, p90, p99, p99.9, max)",
            1.0 if exact_merge and within else 0.0, "(1 = equal)", target="exact merge",
            met=exact_merge and within,
            gap="" if exact_merge and within else "see the detail", detail=table),
    ]
    report(rows, args.json)


if __name__ == "__main__":
    main()
