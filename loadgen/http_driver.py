"""The part of the HTTP object API drivers (Swift, S3) that does not depend on the API: a
fixed pool of worker threads, each with its own persistent HTTP/1.1 connection.

`write`, `read` and `delete` queue the request and return at once, and a worker calls
`done` when the answer is in. No retries: the load must see each failure exactly once,
classed by what the client saw:

- what the API makes of a non-2xx answer (`_error_of`): its HTTP status ("404", "503",
  "507", "401", ...), with S3's error code after it ("503 SlowDown");
- "timeout": the connect, or one read of the answer, timed out (the read timeout
  bounds each wait for data, not the whole transfer);
- "connection": refused, reset, closed mid-answer, unreachable host;
- "aborted": close() gave up waiting and dropped the request.

A request submitted from a completion callback (the closed loop issues its next
operation from there) is kept by the worker that ran the callback and sent next
on its connection, instead of being queued: queueing it would wake one of the
idle workers for nothing (the completing worker takes it back first), a few
context switches per operation when the pool is larger than what is in flight.
Only the first such request is kept; others from the same callback are queued.

A list reads the container's whole listing, page after page on one worker's connection:
its answer is the names, one per line (openloop.Done), and its byte count the listings'.

A subclass says how to reach its service: `connect` (check the credentials, create the
containers, then `_start_workers`), `check_access`, `_send` (one request on a worker's
connection) and `_list_page` (one page of a container's listing).
"""

from __future__ import annotations

import logging
import queue
import threading
import time
import weakref
from dataclasses import dataclass

from .exceptions import DriverError
from .openloop import Done
from .swift_http import Connection, RequestFailure, Response, exception_class, status_class

log = logging.getLogger(__name__)
LIST = "LIST"  # a Request's method for a whole listing (pages of GETs)


@dataclass(frozen=True)
class Request:
    method: str
    container: str
    name: str
    body: bytes | None
    done: Done


class HttpDriver:
    """Asynchronous object operations on a fixed pool of keep-alive workers."""

    api_name = "HTTP"  # in messages: "the Swift driver", "an S3 GET ..."
    compound = (LIST,)  # operations of several requests, served by _serve_compound

    def __init__(self, containers: list[str], concurrency: int = 32,
                 connect_timeout_s: float = 10.0, read_timeout_s: float = 30.0):
        if concurrency < 1:
            raise DriverError(f"the {self.api_name} driver needs at least 1 worker, "
                              f"not {concurrency}")
        self.containers = containers
        self.concurrency = concurrency
        self.connect_timeout_s = connect_timeout_s
        self.read_timeout_s = read_timeout_s
        self._live: weakref.WeakSet[Connection] = weakref.WeakSet()
        self._live_lock = threading.Lock()
        self._queue: queue.SimpleQueue[Request | None] = queue.SimpleQueue()
        self._kept = threading.local()  # a worker's `kept` list: its next request
        self._workers: list[threading.Thread] = []
        self._worker_connections: list[Connection] = []
        self._state_lock = threading.Lock()
        self._closed = False
        self._abort = threading.Event()

    @property
    def connections_opened(self) -> int:
        """How many connections the workers opened so far (keep-alive: ~ concurrency)."""
        return sum(c.opened for c in self._worker_connections)

    def connect(self) -> None:  # pragma: no cover - every driver has its own
        raise NotImplementedError

    def check_access(self) -> None:  # pragma: no cover - every driver has its own
        raise NotImplementedError

    def _send(self, conn: Connection, request: Request) -> Response:  # pragma: no cover
        raise NotImplementedError

    def _list_page(self, conn: Connection, container: str,
                   marker: str | None) -> tuple[Response, list[str], str | None]:
        """One page of the listing after `marker`: the answer, its names and the marker of
        the next page (None: this was the last)."""  # pragma: no cover
        raise NotImplementedError

    def _error_of(self, response: Response) -> str | None:
        """The error class of an answer: None for a 2xx."""
        return status_class(response.status)

    def _check_connectable(self) -> None:
        with self._state_lock:
            if self._closed or self._workers:
                raise DriverError(f"the {self.api_name} driver is "
                                  + ("closed" if self._closed else "already connected"))

    def _start_workers(self) -> None:
        with self._state_lock:
            for i in range(self.concurrency):
                worker_conn = self._new_connection()
                worker = threading.Thread(
                    target=self._work, args=(worker_conn,),
                    name=f"faultline-{self.api_name.lower()}-{i}", daemon=True)
                self._worker_connections.append(worker_conn)
                self._workers.append(worker)
                worker.start()

    def write(self, container: str, name: str, data: bytes, done: Done) -> None:
        self._submit(Request("PUT", container, name, data, done))

    def read(self, container: str, name: str, size: int, done: Done) -> None:
        self._submit(Request("GET", container, name, None, done))

    def delete(self, container: str, name: str, done: Done) -> None:
        self._submit(Request("DELETE", container, name, None, done))

    def head(self, container: str, name: str, done: Done) -> None:
        self._submit(Request("HEAD", container, name, None, done))

    def list(self, container: str, done: Done) -> None:
        self._submit(Request(LIST, container, "", None, done))

    def close(self, drain_s: float = 10.0) -> None:
        """Let the workers finish the queue for up to drain_s, then abort what is left.

        Requests still queued then complete with "aborted"; requests on the wire are
        interrupted (their sockets shut down) and complete with "aborted" too. Every
        worker thread has ended when close() returns, within drain_s plus about the
        connect timeout in the worst case (a connect under way cannot be interrupted).
        """
        with self._state_lock:
            if self._closed:
                return
            self._closed = True
            for _ in self._workers:
                self._queue.put(None)  # after everything queued so far
        deadline = time.monotonic() + drain_s
        for worker in self._workers:
            worker.join(max(0.0, deadline - time.monotonic()))
        if any(w.is_alive() for w in self._workers):
            self._abort.set()
            deadline = time.monotonic() + self.connect_timeout_s + 1.0
            while any(w.is_alive() for w in self._workers) and time.monotonic() < deadline:
                with self._live_lock:
                    live = list(self._live)
                for conn in live:
                    conn.interrupt()
                for worker in self._workers:
                    worker.join(0.05)
        alive = [w.name for w in self._workers if w.is_alive()]
        if alive:  # pragma: no cover - only a done callback that never returns gets here
            log.error(f"{self.api_name} driver threads still running after close: "
                      f"{', '.join(alive)}")

    def _make_connection(self) -> Connection:
        """A new connection of the kind this driver's requests go on (http.client's)."""
        return Connection(self.connect_timeout_s, self.read_timeout_s)

    def _new_connection(self) -> Connection:
        conn = self._make_connection()
        with self._live_lock:
            self._live.add(conn)
        return conn

    def _submit(self, request: Request) -> None:
        with self._state_lock:
            if self._closed or not self._workers:
                raise DriverError(f"the {self.api_name} driver is "
                                  + ("closed" if self._closed else "not connected"))
            kept = getattr(self._kept, "kept", None)  # None unless on a worker
            if kept is not None and not kept:
                kept.append(request)  # sent next by this worker, before it reads the queue
            else:
                self._queue.put(request)

    def _work(self, conn: Connection) -> None:
        self._kept.kept = kept = []
        try:
            while (request := kept.pop() if kept else self._queue.get()) is not None:
                if self._abort.is_set():
                    self._finish(request.done, False, 0, "aborted", None)
                else:
                    self._serve(conn, request)
        finally:
            conn.close()

    def _serve(self, conn: Connection, request: Request) -> None:
        try:
            if request.method in self.compound:
                self._serve_compound(conn, request)
                return
            response = self._send(conn, request)
        except RequestFailure as failure:  # the auth it needed failed
            error = "aborted" if self._abort.is_set() else failure.error_class
            self._finish(request.done, False, 0, error, None)
            return
        except Exception as exc:
            error = "aborted" if self._abort.is_set() else exception_class(exc)
            if error not in ("timeout", "connection", "aborted"):
                log.exception(f"{self.api_name} {request.method} "
                              f"{request.container}/{request.name}")
            self._finish(request.done, False, 0, error, None)
            return
        error = self._error_of(response)
        if error:
            self._finish(request.done, False, 0, error, None)
        elif request.method == "GET":
            self._finish(request.done, True, len(response.body), None, response.body)
        else:
            self._finish(request.done, True, len(request.body or b""), None, None)

    def _serve_compound(self, conn: Connection, request: Request) -> None:
        """An operation of several requests on one connection: a list, here."""
        self._serve_list(conn, request)

    def _serve_list(self, conn: Connection, request: Request) -> None:
        names: list[str] = []
        nbytes, marker = 0, None
        while True:
            response, page, marker = self._list_page(conn, request.container, marker)
            error = self._error_of(response)
            if error:
                self._finish(request.done, False, nbytes, error, None)
                return
            names += page
            nbytes += len(response.body)
            if marker is None:
                break
        self._finish(request.done, True, nbytes, None, "\n".join(names).encode())

    def _finish(self, done: Done, ok: bool, nbytes: int, error: str | None,
                data: bytes | None) -> None:
        try:
            done(ok, nbytes, error, data)
        except Exception:
            log.exception(f"a {self.api_name} load completion callback failed")
