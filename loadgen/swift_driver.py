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

Auth v1: GET the auth URL with X-Auth-User / X-Auth-Key, keep X-Storage-Url and
X-Auth-Token. One token is shared by all workers. A 401 makes the request
re-authenticate and try once more, then the 401 is reported; a token that
X-Auth-Token-Expires says is about to expire is renewed before it is used.

A connection idle for longer than MAX_IDLE_S, or that the server has closed
while idle (the socket is readable), is reopened before it is used rather than
sending a request into it: that is not a retry, nothing was sent.
"""

from __future__ import annotations

import http.client
import logging
import queue
import select
import socket
import threading
import time
import weakref
from dataclasses import dataclass
from urllib.parse import quote, urlsplit

from clusters.credentials import SwiftCredentials

from .exceptions import DriverError
from .openloop import Done

log = logging.getLogger(__name__)

MAX_IDLE_S = 30.0  # below the idle timeouts of the Swift proxy (60 s) and RGW beast (65 s)
REFRESH_MARGIN_S = 60.0  # renew a token this long before it expires (half its life if short)
RENEW_RETRY_S = 5.0  # after a failed early renewal, keep the valid token this long


def status_class(status: int) -> str | None:
    """Error class of an HTTP status: None for 2xx, else the status itself ("404")."""
    return None if 200 <= status < 300 else str(status)


def exception_class(exc: BaseException) -> str:
    """Error class of an exception raised while talking to the server."""
    if isinstance(exc, TimeoutError):  # socket.timeout is TimeoutError
        return "timeout"
    if isinstance(exc, OSError | http.client.HTTPException):
        return "connection"
    return type(exc).__name__


class _Failure(Exception):
    """A request failed before it got an answer worth classifying by status."""

    def __init__(self, error_class: str, message: str):
        super().__init__(message)
        self.error_class = error_class
        self.message = message


@dataclass(frozen=True)
class _Endpoint:
    url: str
    scheme: str
    host: str
    port: int
    path: str  # with the query, if any

    @classmethod
    def parse(cls, url: str) -> _Endpoint:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http:// or https:// URL: {url!r}")
        port = parts.port or (443 if parts.scheme == "https" else 80)
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        return cls(url, parts.scheme, parts.hostname, port, path)

    def path_to(self, container: str, name: str | None = None) -> str:
        path = f"{self.path.rstrip('/')}/{quote(container, safe='')}"
        return path if name is None else f"{path}/{quote(name)}"


@dataclass(frozen=True)
class _Response:
    status: int
    reason: str
    body: bytes
    headers: http.client.HTTPMessage


@dataclass(frozen=True)
class _Token:
    value: str
    storage: _Endpoint
    refresh_at: float | None  # monotonic; None when the server gave no lifetime
    expires_at: float | None


@dataclass(frozen=True)
class _Request:
    method: str
    container: str
    name: str
    body: bytes | None
    done: Done


def _describe(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__


class _Connection:
    """One keep-alive HTTP connection, (re)opened when it is needed."""

    def __init__(self, connect_timeout_s: float, read_timeout_s: float):
        self.connect_timeout_s = connect_timeout_s
        self.read_timeout_s = read_timeout_s
        self.opened = 0
        self._conn: http.client.HTTPConnection | None = None
        self._target: tuple[str, str, int] | None = None
        self._last_used = 0.0

    def request(self, endpoint: _Endpoint, method: str, path: str, headers: dict[str, str],
                body: bytes | None = None) -> _Response:
        conn = self._ready(endpoint)
        try:
            conn.request(method, path, body=body, headers=headers)
            answer = conn.getresponse()
            response = _Response(answer.status, answer.reason, answer.read(), answer.headers)
        except BaseException:
            self.close()  # whatever state it is in, it is not reusable
            raise
        self._last_used = time.monotonic()
        if answer.will_close:
            self.close()
        return response

    def _ready(self, endpoint: _Endpoint) -> http.client.HTTPConnection:
        target = (endpoint.scheme, endpoint.host, endpoint.port)
        if self._conn is not None and (self._target != target or self._stale()):
            self.close()
        if self._conn is None:
            kind = http.client.HTTPSConnection if endpoint.scheme == "https" \
                else http.client.HTTPConnection
            conn = kind(endpoint.host, endpoint.port, timeout=self.connect_timeout_s)
            try:
                conn.connect()  # under the connect timeout
                conn.sock.settimeout(self.read_timeout_s)
            except BaseException:
                conn.close()  # a TLS handshake that failed leaves the TCP socket open
                raise
            self._conn, self._target = conn, target
            self.opened += 1
        return self._conn

    def _stale(self) -> bool:
        sock = self._conn.sock
        if sock is None or time.monotonic() - self._last_used > MAX_IDLE_S:
            return True
        poller = select.poll()
        poller.register(sock, select.POLLIN)
        return bool(poller.poll(0))  # an idle keep-alive socket has nothing to say but EOF

    def interrupt(self) -> None:
        """From another thread: make a request blocked on this connection fail now."""
        sock = getattr(self._conn, "sock", None)
        if sock is not None:
            try:
                socket.socket.shutdown(sock, socket.SHUT_RDWR)
            except OSError:
                pass

    def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()


class _Auth:
    """The token all workers share, renewed under a lock by whichever worker needs it."""

    def __init__(self, credentials: SwiftCredentials, new_connection):
        self.credentials = credentials
        self.endpoint = _Endpoint.parse(credentials.auth_url)
        self.renewals = 0
        self._new_connection = new_connection
        self._lock = threading.Lock()
        self._token: _Token | None = None
        self._retry_at = 0.0

    def token(self) -> _Token:
        with self._lock:
            token, now = self._token, time.monotonic()
            if token is None:
                return self._renew()
            if token.refresh_at is None or now < token.refresh_at or now < self._retry_at:
                return token
            try:
                return self._renew()
            except _Failure as failure:
                if token.expires_at is not None and now >= token.expires_at:
                    raise
                log.warning(f"{failure.message}; keeping the current token for now")
                self._retry_at = now + RENEW_RETRY_S
                return token

    def refresh(self, stale: _Token) -> _Token:
        """A new token after `stale` got a 401 (unless another worker already renewed it)."""
        with self._lock:
            if self._token is not None and self._token is not stale:
                return self._token
            return self._renew()

    def _renew(self) -> _Token:
        self._token = self._authenticate()
        self.renewals += 1
        return self._token

    def _authenticate(self) -> _Token:
        url, user = self.credentials.auth_url, self.credentials.user
        conn = self._new_connection()
        try:
            response = conn.request(self.endpoint, "GET", self.endpoint.path,
                                    {"X-Auth-User": user, "X-Auth-Key": self.credentials.key})
        except Exception as exc:
            raise _Failure(exception_class(exc),
                           f"cannot reach Swift auth at {url}: {_describe(exc)}") from None
        finally:
            conn.close()
        if status_class(response.status):
            raise _Failure(str(response.status), f"Swift auth at {url} refused user {user}: "
                                                 f"{response.status} {response.reason}")
        storage_url = response.headers.get("X-Storage-Url")
        value = response.headers.get("X-Auth-Token")
        if not storage_url or not value:
            raise _Failure("auth", f"Swift auth at {url} answered {response.status} without "
                                   "X-Storage-Url and X-Auth-Token")
        try:
            storage = _Endpoint.parse(storage_url)
        except ValueError:
            raise _Failure("auth", f"Swift auth at {url} gave an unusable storage URL "
                                   f"{storage_url!r}") from None
        now, lifetime = time.monotonic(), _seconds(response.headers.get("X-Auth-Token-Expires"))
        if lifetime is None:
            return _Token(value, storage, None, None)
        return _Token(value, storage, now + max(lifetime - REFRESH_MARGIN_S, lifetime / 2),
                      now + lifetime)


def _seconds(header: str | None) -> float | None:
    try:
        return max(0.0, float(header)) if header else None
    except ValueError:
        return None


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
        self._live: weakref.WeakSet[_Connection] = weakref.WeakSet()
        self._live_lock = threading.Lock()
        try:
            self._auth = _Auth(credentials, self._new_connection)
        except ValueError as exc:
            raise DriverError(f"unusable Swift auth URL: {exc}") from None
        self._queue: queue.SimpleQueue[_Request | None] = queue.SimpleQueue()
        self._workers: list[threading.Thread] = []
        self._worker_connections: list[_Connection] = []
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
        except _Failure as failure:
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
        except _Failure as failure:
            raise DriverError(failure.message) from None
        storage = token.storage
        conn = self._new_connection()
        try:
            response = conn.request(storage, "HEAD", storage.path,
                                    {"X-Auth-Token": token.value})
        except Exception as exc:
            raise DriverError(f"cannot reach Swift storage at {storage.url}: "
                              f"{_describe(exc)}") from None
        finally:
            conn.close()
        if status_class(response.status):
            raise DriverError(f"Swift storage at {storage.url} refused the account: "
                              f"{response.status} {response.reason}")

    def _create_container(self, conn: _Connection, token: _Token, container: str) -> None:
        storage = token.storage
        try:
            response = conn.request(storage, "PUT", storage.path_to(container),
                                    {"X-Auth-Token": token.value, "Content-Length": "0"})
        except Exception as exc:
            raise DriverError(f"cannot reach Swift storage at {storage.url}: "
                              f"{_describe(exc)}") from None
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

    def _new_connection(self) -> _Connection:
        conn = _Connection(self.connect_timeout_s, self.read_timeout_s)
        with self._live_lock:
            self._live.add(conn)
        return conn

    def _submit(self, request: _Request) -> None:
        with self._state_lock:
            if self._closed or not self._workers:
                raise DriverError("the Swift driver is " + ("closed" if self._closed
                                                            else "not connected"))
            self._queue.put(request)

    def _work(self, conn: _Connection) -> None:
        try:
            while (request := self._queue.get()) is not None:
                if self._abort.is_set():
                    self._finish(request.done, False, 0, "aborted", None)
                else:
                    self._serve(conn, request)
        finally:
            conn.close()

    def _serve(self, conn: _Connection, request: _Request) -> None:
        try:
            response = self._send(conn, request)
        except _Failure as failure:  # the auth it needed failed
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

    def _send(self, conn: _Connection, request: _Request) -> _Response:
        token = self._auth.token()
        response = self._on(conn, token, request)
        if response.status == 401:  # once per request; a second 401 is reported
            response = self._on(conn, self._auth.refresh(token), request)
        return response

    @staticmethod
    def _on(conn: _Connection, token: _Token, request: _Request) -> _Response:
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
