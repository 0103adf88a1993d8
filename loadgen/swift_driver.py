"""The Swift API driver: OpenStack Swift, and Ceph RGW's Swift endpoint, over HTTP keep-alive.

A fixed pool of worker threads, each with its own persistent HTTP/1.1
connection; `write`, `read` and `delete` queue the request and return at once,
and a worker calls `done` when the answer is in. Plain http.client, not
python-swiftclient: swiftclient retries and reconnects on its own, and the load
must see each failure exactly once, classed by what the client saw:

- the HTTP status of a non-2xx answer: "404", "503", "507", "401", ...
- "timeout": the connect, or one read of the answer, timed out (the read timeout
  bounds each wait for data, not the whole transfer);
- "connection": refused, reset, closed mid-answer, unreachable host;
- "aborted": close() gave up waiting and dropped the request.

A 401 makes the request re-authenticate (loadgen/swift_http.py) and try once
more, then the 401 is reported.

A request submitted from a completion callback (the closed loop issues its next
operation from there) is kept by the worker that ran the callback and sent next
on its connection, instead of being queued: queueing it would wake one of the
idle workers for nothing (the completing worker takes it back first), a few
context switches per operation when the pool is larger than what is in flight.
Only the first such request is kept; others from the same callback are queued.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
import weakref
from dataclasses import dataclass

from clusters.access.credentials import SwiftCredentials

from .exceptions import DriverError
from .openloop import Done
from .swift_http import (
    Auth,
    Connection,
    RequestFailure,
    Response,
    Token,
    describe,
    exception_class,
    status_class,
)

__all__ = ["SwiftDriver", "exception_class", "status_class"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class _Request:
    method: str
    container: str
    name: str
    body: bytes | None
    done: Done


class SwiftDriver:
    """Asynchronous Swift API operations on a fixed pool of keep-alive workers."""

    def __init__(self, credentials: SwiftCredentials, containers: list[str],
                 concurrency: int = 32, connect_timeout_s: float = 10.0,
                 read_timeout_s: float = 30.0):
        if concurrency < 1:
            raise DriverError(f"the Swift driver needs at least 1 worker, not {concurrency}")
        self.containers = containers
        self.concurrency = concurrency
        self.connect_timeout_s = connect_timeout_s
        self.read_timeout_s = read_timeout_s
        self._live: weakref.WeakSet[Connection] = weakref.WeakSet()
        self._live_lock = threading.Lock()
        try:
            self._auth = Auth(credentials, self._new_connection)
        except ValueError as exc:
            raise DriverError(f"unusable Swift auth URL: {exc}") from None
        self._queue: queue.SimpleQueue[_Request | None] = queue.SimpleQueue()
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

    @property
    def auth_renewals(self) -> int:
        return self._auth.renewals

    def connect(self) -> None:
        """Authenticate and create the containers; raise DriverError on any failure."""
        with self._state_lock:
            if self._closed or self._workers:
                raise DriverError("the Swift driver is " + ("closed" if self._closed
                                                            else "already connected"))
        try:
            token = self._auth.token()
        except RequestFailure as failure:
            raise DriverError(failure.message) from None
        conn = self._new_connection()
        try:
            for container in self.containers:
                self._create_container(conn, token, container)
        finally:
            conn.close()
        with self._state_lock:
            for i in range(self.concurrency):
                worker_conn = self._new_connection()
                worker = threading.Thread(target=self._work, args=(worker_conn,),
                                          name=f"faultline-swift-{i}", daemon=True)
                self._worker_connections.append(worker_conn)
                self._workers.append(worker)
                worker.start()

    def check_access(self) -> None:
        """Authenticate and HEAD the account; changes nothing. DriverError if refused."""
        try:
            token = self._auth.token()
        except RequestFailure as failure:
            raise DriverError(failure.message) from None
        storage = token.storage
        conn = self._new_connection()
        try:
            response = conn.request(storage, "HEAD", storage.path,
                                    {"X-Auth-Token": token.value})
        except Exception as exc:
            raise DriverError(f"cannot reach Swift storage at {storage.url}: "
                              f"{describe(exc)}") from None
        finally:
            conn.close()
        if status_class(response.status):
            raise DriverError(f"Swift storage at {storage.url} refused the account: "
                              f"{response.status} {response.reason}")

    def _create_container(self, conn: Connection, token: Token, container: str) -> None:
        storage = token.storage
        try:
            response = conn.request(storage, "PUT", storage.path_to(container),
                                    {"X-Auth-Token": token.value, "Content-Length": "0"})
        except Exception as exc:
            raise DriverError(f"cannot reach Swift storage at {storage.url}: "
                              f"{describe(exc)}") from None
        if status_class(response.status):
            raise DriverError(f"cannot create container {container!r} at {storage.url}: "
                              f"{response.status} {response.reason}")

    def write(self, container: str, name: str, data: bytes, done: Done) -> None:
        self._submit(_Request("PUT", container, name, data, done))

    def read(self, container: str, name: str, size: int, done: Done) -> None:
        self._submit(_Request("GET", container, name, None, done))

    def delete(self, container: str, name: str, done: Done) -> None:
        self._submit(_Request("DELETE", container, name, None, done))

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
            log.error(f"Swift driver threads still running after close: {', '.join(alive)}")

    def _new_connection(self) -> Connection:
        conn = Connection(self.connect_timeout_s, self.read_timeout_s)
        with self._live_lock:
            self._live.add(conn)
        return conn

    def _submit(self, request: _Request) -> None:
        with self._state_lock:
            if self._closed or not self._workers:
                raise DriverError("the Swift driver is " + ("closed" if self._closed
                                                            else "not connected"))
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

    def _serve(self, conn: Connection, request: _Request) -> None:
        try:
            response = self._send(conn, request)
        except RequestFailure as failure:  # the auth it needed failed
            error = "aborted" if self._abort.is_set() else failure.error_class
            self._finish(request.done, False, 0, error, None)
            return
        except Exception as exc:
            error = "aborted" if self._abort.is_set() else exception_class(exc)
            if error not in ("timeout", "connection", "aborted"):
                log.exception(f"Swift {request.method} {request.container}/{request.name}")
            self._finish(request.done, False, 0, error, None)
            return
        error = status_class(response.status)
        if error:
            self._finish(request.done, False, 0, error, None)
        elif request.method == "GET":
            self._finish(request.done, True, len(response.body), None, response.body)
        else:
            self._finish(request.done, True, len(request.body or b""), None, None)

    def _send(self, conn: Connection, request: _Request) -> Response:
        token = self._auth.token()
        response = self._on(conn, token, request)
        if response.status == 401:  # once per request; a second 401 is reported
            response = self._on(conn, self._auth.refresh(token), request)
        return response

    @staticmethod
    def _on(conn: Connection, token: Token, request: _Request) -> Response:
        path = token.storage.path_to(request.container, request.name)
        return conn.request(token.storage, request.method, path,
                            {"X-Auth-Token": token.value}, request.body)

    @staticmethod
    def _finish(done: Done, ok: bool, nbytes: int, error: str | None,
                data: bytes | None) -> None:
        try:
            done(ok, nbytes, error, data)
        except Exception:
            log.exception("a Swift load completion callback failed")
