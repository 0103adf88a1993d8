"""The Swift API driver: OpenStack Swift, and Ceph RGW's Swift endpoint, over HTTP keep-alive.

The worker pool, the queue and the error classes are loadgen/http_driver.py's. Plain
http.client, not python-swiftclient: swiftclient retries and reconnects on its own, and
the load must see each failure exactly once. A 401 makes the request re-authenticate
(loadgen/swift_http.py) and try once more, then the 401 is reported.
"""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import quote

from clusters.access.credentials import SwiftCredentials

from .exceptions import DriverError
from .http_driver import HttpDriver, Request
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

LISTING_PAGE = 10_000  # names per listing page: Swift's default container_listing_limit


class SwiftDriver(HttpDriver):
    """Asynchronous Swift API operations on a fixed pool of keep-alive workers."""

    api_name = "Swift"
    listing_page = LISTING_PAGE  # a test lists in small pages

    def __init__(self, credentials: SwiftCredentials, containers: list[str],
                 concurrency: int = 32, connect_timeout_s: float = 10.0,
                 read_timeout_s: float = 30.0):
        super().__init__(containers, concurrency, connect_timeout_s, read_timeout_s)
        try:
            self._auth = Auth(credentials, self._new_connection)
        except ValueError as exc:
            raise DriverError(f"unusable Swift auth URL: {exc}") from None

    @property
    def auth_renewals(self) -> int:
        return self._auth.renewals

    def connect(self) -> None:
        """Authenticate and create the containers; raise DriverError on any failure."""
        self._check_connectable()
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
        self._start_workers()

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

    def _send(self, conn: Connection, request: Request) -> Response:
        return self._authorized(lambda token: self._on(conn, token, request))

    def _authorized(self, call: Callable[[Token], Response]) -> Response:
        """`call` with the current token; once more with a new one after a 401 (once per
        request; a second 401 is reported)."""
        token = self._auth.token()
        response = call(token)
        if response.status == 401:
            response = call(self._auth.refresh(token))
        return response

    def _list_page(self, conn: Connection, container: str,
                   marker: str | None) -> tuple[Response, list[str], str | None]:
        """A page of names in plain text, one per line (204 when there are none)."""
        query = f"?format=plain&limit={self.listing_page}" + (
            "" if marker is None else f"&marker={quote(marker, safe='')}")
        response = self._authorized(lambda token: self._listing(conn, token, container, query))
        names = response.body.decode("utf-8", "replace").splitlines() \
            if response.status == 200 else []
        return response, names, names[-1] if len(names) >= self.listing_page else None

    @staticmethod
    def _listing(conn: Connection, token: Token, container: str, query: str) -> Response:
        return conn.request(token.storage, "GET", token.storage.path_to(container) + query,
                            {"X-Auth-Token": token.value})

    @staticmethod
    def _on(conn: Connection, token: Token, request: Request) -> Response:
        path = token.storage.path_to(request.container, request.name)
        return conn.request(token.storage, request.method, path,
                            {"X-Auth-Token": token.value}, request.body)
