"""P1-s3: closed loop, 16 in flight, 4 KiB PUT then GET through S3 (Signature V4,
path-style), on Ceph's RGW or on the Swift proxy's s3api: Faultline's S3 driver against the
fastest S3 client on this machine, in the same session, by pairs as P1-ceph
(bench/pairs.py: A B B A, then B A A B, back to back, each pair's objects deleted after it).

The reference is a threaded boto3 loop: 16 threads sharing one boto3 client with 16 pooled
keep-alive connections, retries off and no checksum it is not asked for (botocore would
otherwise add a CRC32 to every PUT), PUTting one 4 KiB payload in a closed loop for N
seconds, then GETting random ones of what it wrote. It was the only candidate: s3cmd sends
one request at a time, and the AWS CLI is botocore with a process per command. Both tools
write to the same buckets (faultline-000 ...) and delete what they wrote.

Targets: >= 0.95x the reference's ops/s at the low end of the pair ratios' interval, for
both operations; Faultline's CPU per operation (its whole process: signing, HTTP,
bookkeeping) at most 0.3 ms at the high end of its pairs' interval. The lab's daemons and
the client run on CPUs of their own (bench/cpus.py), as in P1-ceph.

`--aa` adds the A/A check, boto3 against itself by the same pairs (bench/pairs.aa_rows):
the spread the method gives where there is no difference.

    .venv/bin/python -m bench.p1_s3 --system ceph|swift [--pairs 6] [--seconds 10] [--aa]
"""

from __future__ import annotations

import os
import random
import time

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from clusters.access.credentials import s3_credentials
from loadgen.openloop import container_names
from loadgen.workload import parse_workload

from . import labs
from .cpus import separate_cpus
from .load import condition, own_cpu, run_threads, write_then_read_kept
from .p1_ceph import require_whole
from .pairs import OPS, Cleanup, aa_rows, pairs
from .results import Row, arguments, fail, median, median_interval, report

IN_FLIGHT = 16
SIZE = 4096
CONTAINERS = 4  # as P1-swift: one Swift container database is a bottleneck
TARGET = 0.95
CPU_MS_TARGET = 0.3
MIN_PAIRS = 5
CONFIDENCE = 0.9
SERVER = {"ceph": "RGW", "swift": "Swift's s3api"}


def faultline(cluster, seconds: float) -> tuple[dict[str, float], dict[str, float], Cleanup]:
    """Faultline's S3 driver in its closed loop: a write phase, then a read of what it wrote."""
    cpu_ms: dict[str, float] = {}
    rates, remove = write_then_read_kept(cluster, "s3", seconds, IN_FLIGHT, SIZE, CONTAINERS,
                                         cpu_ms)
    return rates, cpu_ms, remove


def boto3_threads(cluster, seconds: float
                  ) -> tuple[dict[str, float], dict[str, float], Cleanup]:
    """16 threads on one boto3 client: PUT for N s, then GET for N s."""
    credentials = s3_credentials(cluster)
    client = boto3.client(
        "s3", endpoint_url=credentials.endpoint, region_name=credentials.region,
        aws_access_key_id=credentials.access_key, aws_secret_access_key=credentials.secret_key,
        config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1},
                      max_pool_connections=IN_FLIGHT,
                      request_checksum_calculation="when_required",
                      response_checksum_validation="when_required"))
    buckets = container_names(parse_workload({"containers": CONTAINERS}))
    for bucket in buckets:  # Faultline's driver made them; made here if this runs first
        try:
            client.create_bucket(Bucket=bucket)
        except ClientError as exc:
            if exc.response["Error"]["Code"] not in ("BucketAlreadyOwnedByYou",
                                                     "BucketAlreadyExists"):
                raise
    payload = os.urandom(SIZE)
    prefix = f"p1-boto3-{time.time_ns()}"
    clients = [client] * IN_FLIGHT
    written: list[list[tuple[str, str]]] = [[] for _ in range(IN_FLIGHT)]
    errors = [0] * IN_FLIGHT
    everything: list[tuple[str, str]] = []

    def put(i: int, s3, end: float) -> int:
        mine, n = written[i], 0
        while time.monotonic() < end:
            bucket, key = buckets[n % CONTAINERS], f"{prefix}-{i}-{n}"
            n += 1
            try:
                s3.put_object(Bucket=bucket, Key=key, Body=payload)
                mine.append((bucket, key))
            except (ClientError, BotoCoreError):
                errors[i] += 1
        return len(mine)

    def get(i: int, s3, end: float) -> int:
        rng, done = random.Random(i), 0
        while time.monotonic() < end:
            bucket, key = rng.choice(everything)
            try:
                if len(s3.get_object(Bucket=bucket, Key=key)["Body"].read()) == SIZE:
                    done += 1
                else:
                    errors[i] += 1
            except (ClientError, BotoCoreError):
                errors[i] += 1
        return done

    def remove() -> None:
        share = [everything[i::IN_FLIGHT] for i in range(IN_FLIGHT)]
        run_threads(lambda i, s3, _: sum(_deleted(s3, *o) for o in share[i]), clients, None)
        client.close()

    rates, cpu_ms = {}, {}
    try:
        for op, work in (("write", put), ("read", get)):
            everything[:] = [o for mine in written for o in mine]
            cpu0 = own_cpu()
            rates[op] = run_threads(work, clients, seconds)
            cpu_ms[op] = (own_cpu() - cpu0) * 1000 / max(1.0, rates[op] * seconds)
            if any(errors):
                raise RuntimeError(f"{sum(errors)} errors in boto3's {op}s")
        everything[:] = [o for mine in written for o in mine]
    except BaseException:
        everything[:] = [o for mine in written for o in mine]
        remove()
        raise
    return rates, cpu_ms, remove


def boto3_again(cluster, seconds: float
                ) -> tuple[dict[str, float], dict[str, float], Cleanup]:
    """boto3 as the other tool of the A/A check: the method against no difference."""
    return boto3_threads(cluster, seconds)


def _deleted(s3, bucket: str, key: str) -> bool:
    try:
        s3.delete_object(Bucket=bucket, Key=key)
        return True
    except (ClientError, BotoCoreError):
        return False


def rows_of(found: dict[str, dict[str, list]], system: str, count: int, seconds: float,
            label: str, load: tuple[float, float]) -> list[Row]:
    """Per operation, a throughput row against boto3 and Faultline's CPU-per-op row."""
    ours, theirs = found["faultline"], found["boto3_threads"]
    judged = count >= MIN_PAIRS
    rows, where = [], SERVER[system]
    for op in OPS:
        ratios = [a / b for a, b in zip(ours[op], theirs[op], strict=True)]
        low, high, coverage = median_interval(ratios, CONFIDENCE)
        cpu_key = f"{op}_cpu_ms"
        cpu_low, cpu_high, cpu_coverage = median_interval(ours[cpu_key], CONFIDENCE)
        detail = {"system": system, "faultline": ours[op], "boto3": theirs[op],
                  "seconds": seconds, "containers": CONTAINERS, "load_average": list(load),
                  "pair_ratios": ratios, "ratio_median": median(ratios), "ratio_low": low,
                  "ratio_high": high, "coverage": coverage,
                  "faultline_cpu_ms_per_op": ours[cpu_key],
                  "boto3_cpu_ms_per_op": theirs[cpu_key], "runs_per_pair": 2,
                  "idle_wait_s": found["pair"]["idle_wait_s"]}
        met = low >= TARGET if judged else None
        gap = "" if met in (None, True) else f"the interval's low end is {low:.3f}x"
        rows.append(Row(
            f"P1-s3-{system}", f"S3 on {where}, closed loop {IN_FLIGHT} in flight, 4 KiB {op}, "
            f"{label}, median of {count} pairs of 2 runs each (pair ratios' median "
            f"{median(ratios):.3f}, {coverage:.2%} interval {low:.3f}-{high:.3f}; load "
            f"average {load[0]:.1f} then {load[1]:.1f})", median(ours[op]), "ops/s",
            median(theirs[op]), "boto3, 16 threads",
            f">= {TARGET}x at the interval's low end" if judged else "(for information)",
            met, gap if judged else f"{count} pairs: at least {MIN_PAIRS} for a verdict",
            detail))
        met = cpu_high <= CPU_MS_TARGET if judged else None
        rows.append(Row(
            f"P1-s3-{system}", f"S3 on {where}, Faultline's CPU per 4 KiB {op}, {label}, "
            f"median of {count} pairs ({cpu_coverage:.2%} interval {cpu_low:.3f}-"
            f"{cpu_high:.3f} ms)", median(ours[cpu_key]), "ms", median(theirs[cpu_key]),
            "boto3, 16 threads",
            f"<= {CPU_MS_TARGET} ms at the interval's high end" if judged
            else "(for information)", met,
            "" if met in (None, True) else f"the interval's high end is {cpu_high:.3f} ms",
            detail))
    return rows


def main() -> None:
    parser = arguments(__doc__)
    parser.add_argument("--system", choices=sorted(SERVER), required=True)
    parser.add_argument("--pairs", type=int, default=6)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--aa", action="store_true",
                        help="also boto3 against itself: the method's own spread")
    args = parser.parse_args()
    if args.pairs < 1 or args.seconds <= 0:
        fail("--pairs must be at least 1 and --seconds above 0")
    cluster = labs.cluster(args.system)
    quiet = condition(args.system)
    check = (lambda when: require_whole(cluster, when)) if args.system == "ceph" \
        else (lambda when: None)
    with separate_cpus(args.system) as (servers, client):
        label = f"{quiet}, cluster on CPU {servers}, client on CPU {client}"
        before = os.getloadavg()[0]
        found = pairs(cluster, args.system, args.pairs, args.seconds, label,
                      (faultline, boto3_threads), check)
        load = (before, os.getloadavg()[0])
        rows = rows_of(found, args.system, args.pairs, args.seconds, label, load)
        if args.aa:
            found = pairs(cluster, args.system, args.pairs, args.seconds, label,
                          (boto3_threads, boto3_again), check)
            rows += aa_rows(found, "boto3_threads", "boto3_again", f"P1-s3-{args.system}-aa",
                            f"A/A: boto3 against itself through S3 on {SERVER[args.system]}, "
                            f"4 KiB {{op}}, {label}", "boto3, 16 threads", args.pairs,
                            args.seconds, CONFIDENCE)
    report(rows, args.json)


if __name__ == "__main__":
    main()
