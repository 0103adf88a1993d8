"""P1-s3-wait: what a slow server costs the S3 load's CPU per operation, without a lab.

P1-s3-swift finds Faultline's S3 driver at 0.43 ms of CPU per 4 KiB PUT on the Swift lab
(23 PUTs/s, each answered after about 0.7 s), where RGW's 213 PUTs/s cost it 0.24 ms. This
benchmark tells the server's wait from the driver's own cost: a local HTTP server, on CPU
0, answers every PUT after a fixed delay, with the headers Swift's s3api sends; on CPU 1,
16 PUTs are kept in flight for a few seconds by three clients, in turn:

- faultline: the S3 driver's closed loop, its key "account:user" as Swift's tempauth
  gives, so that every request is signed by loadgen/sigv4.py as on the Swift lab;
- easy: 16 threads, each on a bare libcurl easy handle (loadgen/curl_http.py's
  connection, unsigned): the floor of the driver's design, one connection per thread;
- multi: one thread driving 16 libcurl easy handles through a multi handle.

Each row is a client's CPU (its process's user + system time) per PUT at one delay, the
median of the runs with its order-statistic interval, against the easy handles' at the
same delay. For information only: no target.

    .venv/bin/python -m bench.p1_s3_wait [--runs 5] [--seconds 6] [--delays-ms 5,50,500,700]
"""

from __future__ import annotations

import multiprocessing
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pycurl

from clusters.access.credentials import S3Credentials
from loadgen.closedloop import closed_loop
from loadgen.curl_http import CurlConnection
from loadgen.ledger import Ledger
from loadgen.openloop import container_names
from loadgen.payload import PayloadSource
from loadgen.s3_driver import S3Driver
from loadgen.samples import SampleRecorder
from loadgen.swift_http import Endpoint
from loadgen.workload import OPS, parse_workload

from .load import own_cpu
from .results import Row, arguments, fail, median, median_interval, report

IN_FLIGHT = 16
SIZE = 4096
CONTAINERS = 4
CONFIDENCE = 0.9
SERVER_CPU, CLIENT_CPU = 0, 1
# what Swift's s3api answers a PUT with (seen on the lab's proxy), less the ETag's value
PUT_HEADERS = (("Content-Type", "text/html; charset=UTF-8"), ("Content-Length", "0"),
               ("ETag", '"2703bc9e7344373b76e63d23a228afd9"'),
               ("Last-Modified", "Fri, 04 Dec 2026 03:30:26 GMT"),
               ("x-amz-id-2", "tx0123456789abcdef0123456789abcdef"),
               ("x-amz-request-id", "tx0123456789abcdef0123456789abcdef"),
               ("X-Trans-Id", "tx0123456789abcdef0123456789abcdef"),
               ("X-Openstack-Request-Id", "tx0123456789abcdef0123456789abcdef"))


def _serve(delay_s: float, ready, port) -> None:
    """The slow server's process: every request answered 200 after `delay_s`."""
    os.sched_setaffinity(0, {SERVER_CPU})

    class Slow(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _answer(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(length)
            time.sleep(delay_s)
            self.send_response_only(200)
            for name, value in PUT_HEADERS:
                self.send_header(name, value)
            self.end_headers()

        do_PUT = do_GET = do_HEAD = do_DELETE = _answer

        def log_message(self, *args) -> None:
            pass

    ThreadingHTTPServer.daemon_threads = True
    server = ThreadingHTTPServer(("127.0.0.1", 0), Slow)
    port.value = server.server_address[1]
    ready.set()
    server.serve_forever()


class SlowServer:
    """The server in a process of its own, ended (by its PID) when the block ends."""

    def __init__(self, delay_s: float):
        context = multiprocessing.get_context("spawn")
        self._ready, self._port = context.Event(), context.Value("i", 0)
        self._process = context.Process(target=_serve, args=(delay_s, self._ready,
                                                             self._port), daemon=True)

    def __enter__(self) -> str:
        self._process.start()
        if not self._ready.wait(30):
            self.__exit__()
            fail("the local HTTP server did not start in 30 s")
        return f"http://127.0.0.1:{self._port.value}"

    def __exit__(self, *exc) -> None:
        self._process.terminate()
        self._process.join(10)


def faultline(url: str, seconds: float) -> tuple[int, float]:
    """The S3 driver's closed loop of PUTs: (operations, CPU seconds)."""
    workload = parse_workload({"containers": CONTAINERS, "objects_per_container": 1,
                               "object_size": SIZE, "mix": {"write": 100},
                               "workers": IN_FLIGHT, "prefill": False, "duration_s": seconds})
    driver = S3Driver(S3Credentials(url, "bench:tester", "secret"), container_names(workload),
                      IN_FLIGHT)
    driver.connect()
    try:
        recorder = SampleRecorder(time.time(), time.monotonic())
        loop = closed_loop(driver, workload, recorder, Ledger(workload.seed),
                           PayloadSource(workload.seed, SIZE, SIZE),
                           name_prefix=f"wait-{time.time_ns()}")
        cpu0 = own_cpu()
        loop.start()
        time.sleep(seconds)
        loop.stop()
        cpu = own_cpu() - cpu0
        samples = recorder.take_all(time.monotonic(), OPS)
    finally:
        driver.close()
    if any(s.error_count for s in samples):
        fail("the S3 driver's PUTs to the local server failed")
    return sum(s.ops for s in samples), cpu


def easy(url: str, seconds: float) -> tuple[int, float]:
    """16 threads, each PUTting on its own libcurl connection, unsigned."""
    endpoint, body = Endpoint.parse(url), os.urandom(SIZE)
    counts = [0] * IN_FLIGHT
    start = threading.Barrier(IN_FLIGHT + 1)

    def put(i: int) -> None:
        conn = CurlConnection(10.0, 30.0, None)
        start.wait()
        try:
            while time.monotonic() < end:
                conn.request(endpoint, "PUT", f"/faultline-000/easy-{i}-{counts[i]}", {}, body)
                counts[i] += 1
        finally:
            conn.close()

    threads = [threading.Thread(target=put, args=(i,)) for i in range(IN_FLIGHT)]
    for thread in threads:
        thread.start()
    cpu0, end = own_cpu(), time.monotonic() + seconds
    start.wait()
    for thread in threads:
        thread.join()
    return sum(counts), own_cpu() - cpu0


def multi(url: str, seconds: float) -> tuple[int, float]:
    """One thread, 16 libcurl easy handles on one multi handle."""
    body, done = os.urandom(SIZE), [0]
    handles, driving = [], pycurl.CurlMulti()

    def prepare(handle: pycurl.Curl) -> None:
        handle.setopt(pycurl.URL, f"{url}/faultline-000/multi-{done[0]}-{len(handles)}")
        handle.setopt(pycurl.CUSTOMREQUEST, "PUT")
        handle.setopt(pycurl.POSTFIELDS, body)
        handle.setopt(pycurl.WRITEFUNCTION, lambda chunk: None)
        handle.setopt(pycurl.HTTPHEADER, ["Expect:", "Content-Type:"])

    try:
        cpu0, end = own_cpu(), time.monotonic() + seconds
        for _ in range(IN_FLIGHT):
            handle = pycurl.Curl()
            prepare(handle)
            handles.append(handle)
            driving.add_handle(handle)
        finished = 0
        while time.monotonic() < end:
            if not finished:  # a handle just added is started by perform, not by waiting
                wait_ms = driving.timeout()  # libcurl's next timer, -1 if none
                driving.select(1.0 if wait_ms < 0 else min(1.0, wait_ms / 1000))
            while driving.perform()[0] == pycurl.E_CALL_MULTI_PERFORM:
                pass
            queued, finished = 1, 0
            while queued:
                queued, ok, failed = driving.info_read()
                if failed:
                    fail(f"a PUT to the local server failed: {failed[0][2]}")
                finished += len(ok)
                for handle in ok:
                    done[0] += 1
                    driving.remove_handle(handle)
                    handle.reset()
                    prepare(handle)
                    driving.add_handle(handle)
        return done[0], own_cpu() - cpu0
    finally:
        for handle in handles:
            driving.remove_handle(handle)
            handle.close()
        driving.close()


CLIENTS = {"faultline": faultline, "easy": easy, "multi": multi}
NAMES = {"faultline": "Faultline's S3 driver (Python-signed, as on Swift)",
         "easy": "16 threads on libcurl easy handles",
         "multi": "one thread, 16 handles on a libcurl multi handle"}


def rows_of(found: dict, runs: int, seconds: float) -> list[Row]:
    rows = []
    for delay_ms, by_client in found.items():
        floor = median([1000 * cpu / ops for ops, cpu in by_client["easy"]])
        for client in ("faultline", "multi"):
            per_op = [1000 * cpu / ops for ops, cpu in by_client[client]]
            rates = [ops / seconds for ops, _ in by_client[client]]
            low, high, coverage = median_interval(per_op, CONFIDENCE)
            rows.append(Row(
                "P1-s3-wait", f"{NAMES[client]}: CPU per 4 KiB PUT, {IN_FLIGHT} in flight, a "
                f"local server answering after {delay_ms} ms (on CPU {SERVER_CPU}, client on "
                f"CPU {CLIENT_CPU}), median of {runs} runs of {seconds:g} s at "
                f"{median(rates):.1f} PUTs/s ({coverage:.2%} interval {low:.3f}-{high:.3f} "
                "ms)", median(per_op), "ms", floor, NAMES["easy"], "(for information)", None,
                "", {"delay_ms": delay_ms, "cpu_ms_per_op": per_op, "ops_per_s": rates,
                     "easy_cpu_ms_per_op": [1000 * c / n for n, c in by_client["easy"]]}))
    return rows


def main() -> None:
    parser = arguments(__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=6.0)
    parser.add_argument("--delays-ms", default="5,50,500,700")
    args = parser.parse_args()
    try:
        delays = [int(d) for d in args.delays_ms.split(",")]
    except ValueError:
        fail(f"--delays-ms must be whole milliseconds, comma-separated: {args.delays_ms!r}")
    if args.runs < 1 or args.seconds <= 0 or any(d < 0 for d in delays):
        fail("--runs must be at least 1, --seconds above 0 and every delay at least 0")
    if len(os.sched_getaffinity(0)) < 2:
        fail("needs two CPUs: the server on one, the clients on the other")
    found: dict[int, dict[str, list]] = {}
    mask = os.sched_getaffinity(0)
    for delay_ms in delays:
        found[delay_ms] = {client: [] for client in CLIENTS}
        with SlowServer(delay_ms / 1000) as url:
            os.sched_setaffinity(0, {CLIENT_CPU})
            try:
                order = list(CLIENTS)
                for run in range(args.runs):  # each run in another order: no client always first
                    for client in order[run % 3:] + order[:run % 3]:
                        found[delay_ms][client].append(CLIENTS[client](url, args.seconds))
            finally:
                os.sched_setaffinity(0, mask)
    report(rows_of(found, args.runs, args.seconds), args.json)


if __name__ == "__main__":
    main()
