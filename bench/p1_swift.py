"""P1-swift: closed loop, 16 in flight, 4 KiB write then read, on the Swift lab: Faultline's
Swift driver against two references, alternating A B C, then C B A, in the same session:

- a minimal keep-alive HTTP client written here: 16 threads, each with its own
  http.client connection to the proxy, PUTting one pre-generated 4 KiB payload in a
  closed loop for N seconds, then GETting random ones of what they wrote for N seconds;
- swift-bench 2.0.0 (`swift-bench` with a config file: concurrency 16, object_size 4096),
  its PUT and GET counts sized from its last measured rates so that each phase lasts
  about N seconds (a first short run sizes the first pair), and interrupted (SIGINT: it
  reports what it did, then deletes) if a phase runs far longer.

All three write to the same number of containers, and delete what they wrote.
Targets: >= 0.95x the faster reference, and >= 4x swift-bench, for both operations.

As in P1-ceph, a ratio is judged per pair (the three runs of a pair are next to each other
in time): each row gives the median of the pairs' ratios against one reference, with an
exact order-statistic interval for it (min to max of 5 pairs covers the median with
93.75%), and "met" asks the interval's low end to clear the target. At least 5 pairs for
a verdict. Faultline is judged against the keep-alive client at 0.95x and against swift-bench
at 4x: together they ask 0.95x of the faster of the two, whichever it is. The row says
which labs were up (`make bench` measures it with only the Swift lab up, then with both
labs and the service up) and the load average over the pairs.

    .venv/bin/python -m bench.p1_swift [--pairs 5] [--seconds 10] [--json FILE]
"""

from __future__ import annotations

import http.client
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

from swiftclient.client import (
    ClientException,
    delete_container,
    delete_object,
    get_auth,
    get_container,
)

from clusters.access.credentials import swift_credentials

from . import labs
from .load import condition, run_threads, write_then_read
from .results import Row, arguments, median, median_interval, report

IN_FLIGHT = 16
SIZE = 4096
CONTAINERS = 4  # the same for the three tools (one Swift container DB is a bottleneck)
TARGET = 0.95
OVER_SWIFT_BENCH = 4.0
SWIFT_BENCH = Path(sys.executable).with_name("swift-bench")
PHASES = {"write": "PUTS", "read": "GETS"}
MIN_PAIRS = 5  # fewer give no verdict: min to max of 4 covers the median only 87.5%
CONFIDENCE = 0.9


# -- Faultline -------------------------------------------------------------------------------


def faultline(cluster, seconds: float) -> dict[str, float]:
    """ops/s of Faultline's closed loop: a write phase, then a read phase of what it wrote."""
    return write_then_read(cluster, "swift", seconds, IN_FLIGHT, SIZE, CONTAINERS)


# -- the keep-alive reference ------------------------------------------------------------------


def keepalive(cluster, seconds: float) -> dict[str, float]:
    """ops/s of 16 threads, one keep-alive connection each: PUT for N s, then GET for N s."""
    credentials = swift_credentials(cluster)
    storage_url, token = get_auth(credentials.auth_url, credentials.user, credentials.key,
                                  auth_version="1.0")
    url = urlsplit(storage_url)
    host, port, account = url.hostname, url.port or 80, url.path.rstrip("/")
    containers = [f"{account}/faultline-{i:03d}" for i in range(CONTAINERS)]
    headers = {"X-Auth-Token": token}
    conns = [http.client.HTTPConnection(host, port, timeout=30) for _ in range(IN_FLIGHT)]
    for container in containers:
        _expect(conns[0], "PUT", container, b"", headers)
    payload = os.urandom(SIZE)
    prefix = f"p1-ref-{time.time_ns()}"
    written: list[list[str]] = [[] for _ in range(IN_FLIGHT)]
    errors = [0] * IN_FLIGHT

    def put(i: int, conn: http.client.HTTPConnection, end: float) -> int:
        mine, n = written[i], 0
        while time.monotonic() < end:
            path = f"{containers[n % CONTAINERS]}/{prefix}-{i}-{n}"
            n += 1
            if _ok(conn, "PUT", path, payload, headers):
                mine.append(path)
            else:
                errors[i] += 1
        return len(mine)

    def get(i: int, conn: http.client.HTTPConnection, end: float) -> int:
        rng, done = random.Random(i), 0
        while time.monotonic() < end:
            if _ok(conn, "GET", rng.choice(everything), None, headers, SIZE):
                done += 1
            else:
                errors[i] += 1
        return done

    try:
        rates = {}
        for op, work in (("write", put), ("read", get)):
            everything = [path for mine in written for path in mine]
            rates[op] = run_threads(work, conns, seconds)
            if any(errors):
                raise RuntimeError(f"{sum(errors)} errors in the keep-alive client's {op}s")
        return rates
    finally:
        written_all = [path for mine in written for path in mine]
        share = [written_all[i::IN_FLIGHT] for i in range(IN_FLIGHT)]
        run_threads(lambda i, conn, _: sum(_ok(conn, "DELETE", p, None, headers)
                                        for p in share[i]), conns, None)
        for conn in conns:
            conn.close()


def _ok(conn: http.client.HTTPConnection, method: str, path: str, body: bytes | None,
        headers: dict[str, str], size: int | None = None) -> bool:
    try:
        conn.request(method, path, body, headers)
        answer = conn.getresponse()
        data = answer.read()
    except (OSError, http.client.HTTPException):
        conn.close()  # reopened by the next request
        return False
    return 200 <= answer.status < 300 and (size is None or len(data) == size)


def _expect(conn, method: str, path: str, body: bytes | None, headers: dict) -> None:
    if not _ok(conn, method, path, body, headers):
        raise RuntimeError(f"the keep-alive client's {method} {path} failed")


# -- swift-bench -----------------------------------------------------------------------------

FINAL = re.compile(r"(\d+) (PUTS|GETS|DEL) \*\*FINAL\*\* \[(\d+) failures\], ([\d.]+)/s")


class SwiftBench:
    """swift-bench 2.0.0 runs, each sized from the rates the previous one measured."""

    __name__ = "swift_bench"

    def __init__(self) -> None:
        self.rates: dict[str, float] = {}
        self.runs: list[dict] = []  # what each run did, for the rows' detail

    def calibrate(self, cluster) -> None:
        """A short run (32 PUTs, 64 GETs) whose rates size the first measured run."""
        self._run(cluster, {"PUTS": 32, "GETS": 64}, limit_s=120.0)
        self.runs[-1]["calibration"] = True

    def __call__(self, cluster, seconds: float) -> dict[str, float | None]:
        counts = {phase: max(IN_FLIGHT, round(self.rates.get(op, 10.0) * seconds))
                  for op, phase in PHASES.items()}
        result = self._run(cluster, counts, limit_s=2 * seconds + 10)
        return {op: result.get(phase) for op, phase in PHASES.items()}

    def _run(self, cluster, counts: dict[str, int], limit_s: float) -> dict[str, float]:
        """Successful ops/s of each phase that finished or was interrupted. A phase that
        runs longer than limit_s gets a SIGINT (swift-bench then reports it and deletes);
        a run that still has not ended 5 minutes later is killed."""
        credentials = swift_credentials(cluster)
        base = f"faultline-p1-swiftbench-{time.time_ns()}"
        with tempfile.TemporaryDirectory(prefix="p1-swift-bench-") as tmp:
            conf = Path(tmp) / "bench.conf"
            conf.touch(mode=0o600)
            conf.write_text("\n".join([
                "[bench]", f"auth = {credentials.auth_url}", f"user = {credentials.user}",
                f"key = {credentials.key.replace('%', '%%')}", "auth_version = 1.0",
                f"concurrency = {IN_FLIGHT}", f"object_size = {SIZE}",
                f"num_objects = {counts['PUTS']}", f"num_gets = {counts['GETS']}",
                "delete = yes", f"num_containers = {CONTAINERS}", f"container_name = {base}",
                "log_level = INFO", ""]))
            process = subprocess.Popen([str(SWIFT_BENCH), str(conf)], stdout=subprocess.PIPE,
                                       stderr=subprocess.STDOUT, text=True)
            finals, lines, interrupted = {}, [], []
            phase_started = [time.monotonic()]

            def read() -> None:
                for line in process.stdout:
                    lines.append(line.rstrip())
                    found = FINAL.search(line)
                    if found:
                        count, phase, failures, rate = found.groups()
                        count, failures = int(count), int(failures)
                        ok = float(rate) * (count - failures) / count if count else 0.0
                        finals[phase] = {"count": count, "failures": failures, "rate": ok}
                        phase_started[0] = time.monotonic()

            reader = threading.Thread(target=read, daemon=True)
            reader.start()
            hard_end = time.monotonic() + limit_s * 2 + 300
            while process.poll() is None:
                measuring = "PUTS" not in finals or ("GETS" not in finals and counts["GETS"])
                if measuring and not interrupted \
                        and time.monotonic() - phase_started[0] > limit_s:
                    process.send_signal(signal.SIGINT)
                    interrupted.append("GETS" if "PUTS" in finals else "PUTS")
                if time.monotonic() > hard_end:
                    process.kill()
                time.sleep(0.1)
            reader.join(5)
        if interrupted or process.returncode != 0:
            _sweep(credentials, [f"{base}_{i}" for i in range(CONTAINERS)])
        if "PUTS" not in finals:
            raise RuntimeError(f"swift-bench reported nothing (exit {process.returncode}): "
                               + "\n".join(lines[-10:]))
        rates = {phase: final["rate"] for phase, final in finals.items() if phase != "DEL"}
        for op, phase in PHASES.items():
            if phase in rates:
                self.rates[op] = rates[phase]
        self.runs.append({"asked": counts, "reported": finals, "interrupted": interrupted})
        if interrupted:
            print(f"swift-bench: {interrupted[0]} interrupted after {limit_s:.0f} s",
                  file=sys.stderr, flush=True)
        return rates


def _sweep(credentials, containers: list[str]) -> None:
    """Best effort: delete what a swift-bench run that did not end normally left behind."""
    url, token = get_auth(credentials.auth_url, credentials.user, credentials.key,
                          auth_version="1.0")
    for container in containers:
        try:
            for entry in get_container(url, token, container, full_listing=True)[1]:
                try:
                    delete_object(url, token, container, entry["name"])
                except ClientException:
                    pass
            delete_container(url, token, container)
        except ClientException:
            pass


# -- the session -----------------------------------------------------------------------------


def main() -> None:
    parser = arguments(__doc__)
    parser.add_argument("--pairs", type=int, default=MIN_PAIRS)
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()
    if not SWIFT_BENCH.exists():
        sys.exit(f"bench: {SWIFT_BENCH} is missing: pip install swift-bench==2.0.0 "
                 "(the dev extra)")
    cluster = labs.cluster("swift")
    swift_bench = SwiftBench()
    swift_bench.calibrate(cluster)
    print(f"calibration: swift-bench: write {swift_bench.rates['write']:.1f} ops/s, read "
          f"{swift_bench.rates.get('read', 0.0):.1f} ops/s", flush=True)
    tools = [faultline, keepalive, swift_bench]
    label, before = condition("swift"), os.getloadavg()[0]
    figures: dict[str, dict[str, list[float | None]]] = {
        tool.__name__: {"write": [], "read": []} for tool in tools}
    for pair in range(args.pairs):  # A B C, then C B A: none always runs on a warmer cluster
        for tool in tools if pair % 2 == 0 else tools[::-1]:
            rates = tool(cluster, args.seconds)
            for op, rate in rates.items():  # None kept: the lists stay aligned by pair
                figures[tool.__name__][op].append(rate)
            shown = ", ".join(f"{op} " + ("n/a" if rate is None else f"{rate:.1f} ops/s")
                              for op, rate in rates.items())
            print(f"pair {pair + 1}: {tool.__name__}: {shown}", flush=True)
    load = (before, os.getloadavg()[0])
    report(_rows(figures, args, swift_bench.runs, label, load), args.json)


def _rows(figures, args, swift_bench_runs, label: str,
          load: tuple[float, float]) -> list[Row]:
    names = {"keepalive": "keep-alive client", "swift_bench": "swift-bench 2.0.0"}
    rows = []
    for op in ("write", "read"):
        ours = figures["faultline"][op]
        # the keep-alive client at 0.95x and swift-bench at 4x: together they ask 0.95x of
        # the faster one, whichever it is (4x swift-bench is more than 0.95x of it)
        for name, target in (("keepalive", TARGET), ("swift_bench", OVER_SWIFT_BENCH)):
            extra = {"swift_bench_runs": swift_bench_runs} \
                if op == "write" and name == "swift_bench" else {}
            rows.append(_row(op, ours, figures[name][op], name, names[name], target, args,
                             label, load, extra))
    return rows


def _row(op: str, ours: list[float], theirs: list[float | None], name: str, shown: str,
         target: float, args, label: str, load: tuple[float, float], extra: dict) -> Row:
    """One reference's row for one operation: the pairs' ratios, their median and interval
    (pairs where the reference measured nothing are left out, and counted)."""
    what = (f"closed loop {IN_FLIGHT} in flight, 4 KiB {op} ({PHASES[op][:3]}), {label}, "
            f"against {shown}")
    ratios = [a / b for a, b in zip(ours, theirs, strict=False) if b]
    detail = {"faultline": ours, name: theirs, "seconds": args.seconds,
              "containers": CONTAINERS, "load_average": list(load), "pair_ratios": ratios,
              **extra}
    if not ratios:
        return Row("P1-swift", what, median(ours) if ours else None, "ops/s", None, shown,
                   f">= {target:g}x", None, f"{shown} measured nothing", detail)
    low, high, coverage = median_interval(ratios, CONFIDENCE)
    judged = len(ratios) >= MIN_PAIRS
    met = low >= target if judged else None
    detail |= {"ratio_median": median(ratios), "ratio_low": low, "ratio_high": high,
               "coverage": coverage}
    what += (f", median of {len(ratios)} pairs (pair ratios' median {median(ratios):.3f}, "
             f"{coverage:.2%} interval {low:.3f}-{high:.3f}; load average {load[0]:.1f} "
             f"then {load[1]:.1f})")
    gap = "" if met in (None, True) else f"the interval's low end is {low:.3f}x"
    if not judged:
        gap = f"{len(ratios)} pairs: at least {MIN_PAIRS} for a verdict"
    return Row("P1-swift", what, median(ours), "ops/s", median([t for t in theirs if t]),
               shown, f">= {target:g}x at the interval's low end", met, gap, detail)


if __name__ == "__main__":
    main()
