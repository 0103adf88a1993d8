"""Swift auth v1 and one keep-alive HTTP connection, for the Swift API driver.

Auth v1: GET the auth URL with X-Auth-User / X-Auth-Key, keep X-Storage-Url and
X-Auth-Token. One token is shared by all workers; a token that
X-Auth-Token-Expires says is about to expire is renewed before it is used.

A connection idle for longer than MAX_IDLE_S, or that the server has closed
while idle (the socket is readable), is reopened before it is used rather than
sending a request into it: that is not a retry, nothing was sent.
"""

from __future__ import annotations

import http.client
import logging
import select
import socket
import threading
import time
from dataclasses import dataclass
from urllib.parse import quote, urlsplit

from clusters.access.credentials import SwiftCredentials

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


class RequestFailure(Exception):
    """A request failed before it got an answer worth classifying by status."""

    def __init__(self, error_class: str, message: str):
        super().__init__(message)
        self.error_class = error_class
        self.message = message


DEFAULT_PORTS = {"http": 80, "https": 443}


@dataclass(frozen=True)
class Endpoint:
    url: str
    scheme: str
    host: str
    port: int
    path: str  # with the query, if any

    @classmethod
    def parse(cls, url: str) -> Endpoint:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http:// or https:// URL: {url!r}")
        port = parts.port or DEFAULT_PORTS[parts.scheme]
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        return cls(url, parts.scheme, parts.hostname, port, path)

    @property
    def host_header(self) -> str:
        """The Host header a client sends to it: the port left out when it is the scheme's
        (what a signature over the Host header must cover)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if self.port == DEFAULT_PORTS[self.scheme] else f"{host}:{self.port}"

    def path_to(self, container: str, name: str | None = None) -> str:
        path = f"{self.path.rstrip('/')}/{quote(container, safe='')}"
        return path if name is None else f"{path}/{quote(name)}"


@dataclass(frozen=True)
class Response:
    status: int
    reason: str
    body: bytes
    headers: http.client.HTTPMessage


@dataclass(frozen=True)
class Token:
    value: str
    storage: Endpoint
    refresh_at: float | None  # monotonic; None when the server gave no lifetime
    expires_at: float | None


def describe(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__


class Connection:
    """One keep-alive HTTP connection, (re)opened when it is needed."""

    def __init__(self, connect_timeout_s: float, read_timeout_s: float):
        self.connect_timeout_s = connect_timeout_s
        self.read_timeout_s = read_timeout_s
        self.opened = 0
        self._conn: http.client.HTTPConnection | None = None
        self._target: tuple[str, str, int] | None = None
        self._last_used = 0.0

    def request(self, endpoint: Endpoint, method: str, path: str, headers: dict[str, str],
                body: bytes | None = None) -> Response:
        conn = self._ready(endpoint)
        try:
            conn.request(method, path, body=body, headers=headers)
            answer = conn.getresponse()
            response = Response(answer.status, answer.reason, answer.read(), answer.headers)
        except BaseException:
            self.close()  # whatever state it is in, it is not reusable
            raise
        self._last_used = time.monotonic()
        if answer.will_close:
            self.close()
        return response

    def _ready(self, endpoint: Endpoint) -> http.client.HTTPConnection:
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


class Auth:
    """The token all workers share, renewed under a lock by whichever worker needs it."""

    def __init__(self, credentials: SwiftCredentials, new_connection):
        self.credentials = credentials
        self.endpoint = Endpoint.parse(credentials.auth_url)
        self.renewals = 0
        self._new_connection = new_connection
        self._lock = threading.Lock()
        self._token: Token | None = None
        self._retry_at = 0.0

    def token(self) -> Token:
        with self._lock:
            token, now = self._token, time.monotonic()
            if token is None:
                return self._renew()
            if token.refresh_at is None or now < token.refresh_at or now < self._retry_at:
                return token
            try:
                return self._renew()
            except RequestFailure as failure:
                if token.expires_at is not None and now >= token.expires_at:
                    raise
                log.warning(f"{failure.message}; keeping the current token for now")
                self._retry_at = now + RENEW_RETRY_S
                return token

    def refresh(self, stale: Token) -> Token:
        """A new token after `stale` got a 401 (unless another worker already renewed it)."""
        with self._lock:
            if self._token is not None and self._token is not stale:
                return self._token
            return self._renew()

    def _renew(self) -> Token:
        self._token = self._authenticate()
        self.renewals += 1
        return self._token

    def _authenticate(self) -> Token:
        url, user = self.credentials.auth_url, self.credentials.user
        conn = self._new_connection()
        try:
            response = conn.request(self.endpoint, "GET", self.endpoint.path,
                                    {"X-Auth-User": user, "X-Auth-Key": self.credentials.key})
        except Exception as exc:
            raise RequestFailure(exception_class(exc),
                           f"cannot reach Swift auth at {url}: {describe(exc)}") from None
        finally:
            conn.close()
        if status_class(response.status):
            raise RequestFailure(str(response.status), f"Swift auth at {url} refused user {user}: "
                                                 f"{response.status} {response.reason}")
        storage_url = response.headers.get("X-Storage-Url")
        value = response.headers.get("X-Auth-Token")
        if not storage_url or not value:
            raise RequestFailure("auth", f"Swift auth at {url} answered {response.status} without "
                                   "X-Storage-Url and X-Auth-Token")
        try:
            storage = Endpoint.parse(storage_url)
        except ValueError:
            raise RequestFailure("auth", f"Swift auth at {url} gave an unusable storage URL "
                                   f"{storage_url!r}") from None
        now, lifetime = time.monotonic(), _seconds(response.headers.get("X-Auth-Token-Expires"))
        if lifetime is None:
            return Token(value, storage, None, None)
        return Token(value, storage, now + max(lifetime - REFRESH_MARGIN_S, lifetime / 2),
                      now + lifetime)


def _seconds(header: str | None) -> float | None:
    try:
        return max(0.0, float(header)) if header else None
    except ValueError:
        return None
