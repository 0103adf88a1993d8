"""One keep-alive HTTP connection through libcurl (pycurl), signing each request with AWS
Signature V4 in C (CURLOPT_AWS_SIGV4): the S3 driver's connection.

It has swift_http.Connection's interface (request, interrupt, close, opened), so the
HTTP driver's workers, queue and error classes stay as they are. Why libcurl: botocore's
signer alone costs 0.18 ms of Python per request, and http.client's request and header
parsing most of the rest; a libcurl transfer runs signing, sending and parsing in C with
the GIL released, so the S3 load's CPU per operation is about half (bench/p1_s3).

- Over plain HTTP the payload is signed too (libcurl hashes the body it is given); a
  request's Content-Type is left out, as http.client's was, and so is
  `Expect: 100-continue` (a part of a multipart upload would wait for it).
- Timeouts: the connect timeout, and the read timeout as libcurl's low-speed limit (less
  than 1 byte/s for that long), which bounds each wait for data, not the whole transfer.
- A failure is raised as TimeoutError ("timeout") or ConnectionError ("connection"), the
  classes http.client's failures have (swift_http.exception_class).
- `interrupt` shuts the transfer's socket down from another thread, as
  swift_http.Connection does: libcurl's sockets are tracked from their creation to their
  close (CURLOPT_SOCKOPTFUNCTION, CURLOPT_CLOSESOCKETFUNCTION), under a lock, so a
  closed descriptor's number, reused by something else, is never shut down.
"""

from __future__ import annotations

import os
import socket
import threading

import pycurl

from clusters.access.credentials import S3Credentials

from .swift_http import MAX_IDLE_S, Endpoint, Response


class Headers:
    """An answer's header lines, parsed on first use (a PUT or a GET needs none)."""

    def __init__(self, lines: list[bytes]):
        self._lines = lines
        self._parsed: dict[str, str] | None = None

    def get(self, name: str, default: str | None = None) -> str | None:
        if self._parsed is None:
            self._parsed = {}
            for line in self._lines:
                key, sep, value = line.decode("latin-1").partition(":")
                if sep:
                    self._parsed[key.strip().lower()] = value.strip()
        return self._parsed.get(name.lower(), default)


class CurlConnection:
    """A libcurl easy handle: its own connection, kept alive between requests."""

    def __init__(self, connect_timeout_s: float, read_timeout_s: float,
                 signing: S3Credentials | None):
        """`signing`: the key pair libcurl signs each request with; None when the caller
        gives the signature's headers (loadgen/sigv4.py)."""
        self.connect_timeout_s = connect_timeout_s
        self.read_timeout_s = read_timeout_s
        self.opened = 0
        self._signing = signing
        self._curl: pycurl.Curl | None = None
        self._sockets: set[int] = set()  # libcurl's descriptors now open
        self._lock = threading.RLock()  # close() runs the close callback under it

    def request(self, endpoint: Endpoint, method: str, path: str, headers: dict[str, str],
                body: bytes | None = None) -> Response:
        if self._curl is None:
            self._curl = pycurl.Curl()
        curl = self._curl
        curl.reset()
        lines: list[bytes] = []
        chunks: list[bytes] = []
        status_line = [b""]

        def header(line: bytes) -> None:
            if line.startswith(b"HTTP/"):  # a new answer (after a 100 Continue, say)
                status_line[0] = line
                lines.clear()
            else:
                lines.append(line)

        self._configure(curl, endpoint, method, path, headers, body)
        curl.setopt(pycurl.HEADERFUNCTION, header)
        curl.setopt(pycurl.WRITEFUNCTION, chunks.append)
        try:
            curl.perform()
        except pycurl.error as exc:
            code, message = exc.args[0], exc.args[1] if len(exc.args) > 1 else str(exc)
            self.close()  # whatever state it is in, it is not reusable
            if code == pycurl.E_OPERATION_TIMEDOUT:
                raise TimeoutError(message) from None
            raise ConnectionError(message) from None
        self.opened += curl.getinfo(pycurl.NUM_CONNECTS)
        reason = status_line[0].split(b" ", 2)[2:]
        return Response(curl.getinfo(pycurl.RESPONSE_CODE),
                        reason[0].strip().decode("latin-1") if reason else "",
                        b"".join(chunks), Headers(lines))

    def _configure(self, curl: pycurl.Curl, endpoint: Endpoint, method: str, path: str,
                   headers: dict[str, str], body: bytes | None) -> None:
        curl.setopt(pycurl.URL, f"{endpoint.scheme}://{endpoint.host}:{endpoint.port}{path}")
        if self._signing is not None:
            curl.setopt(pycurl.AWS_SIGV4, f"aws:amz:{self._signing.region}:s3")
            # apart, not as USERPWD: a key may hold a colon
            curl.setopt(pycurl.USERNAME, self._signing.access_key)
            curl.setopt(pycurl.PASSWORD, self._signing.secret_key)
        curl.setopt(pycurl.NOSIGNAL, 1)
        curl.setopt(pycurl.CONNECTTIMEOUT_MS, int(self.connect_timeout_s * 1000))
        curl.setopt(pycurl.LOW_SPEED_LIMIT, 1)
        curl.setopt(pycurl.LOW_SPEED_TIME, max(1, round(self.read_timeout_s)))
        curl.setopt(pycurl.MAXAGE_CONN, int(MAX_IDLE_S))
        curl.setopt(pycurl.SOCKOPTFUNCTION, self._opened_socket)
        curl.setopt(pycurl.CLOSESOCKETFUNCTION, self._closing_socket)
        curl.setopt(pycurl.HTTPHEADER, [f"{k}: {v}" for k, v in headers.items()]
                    + ["Expect:", "Content-Type:"])
        if method == "HEAD":
            curl.setopt(pycurl.NOBODY, 1)
        elif body is not None:
            curl.setopt(pycurl.CUSTOMREQUEST, method)
            curl.setopt(pycurl.POSTFIELDS, body)
        elif method != "GET":
            curl.setopt(pycurl.CUSTOMREQUEST, method)

    def _opened_socket(self, fd: int, purpose: int) -> int:
        with self._lock:
            self._sockets.add(fd)
        return pycurl.SOCKOPT_OK

    def _closing_socket(self, fd: int) -> int:
        with self._lock:  # an interrupt never shuts down a number closed meanwhile
            self._sockets.discard(fd)
            os.close(fd)
        return 0

    def interrupt(self) -> None:
        """From another thread: make a request blocked on this connection fail now."""
        with self._lock:
            for fd in self._sockets:
                try:
                    sock = socket.socket(fileno=os.dup(fd))
                except OSError:
                    continue
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                finally:
                    sock.close()

    def close(self) -> None:
        with self._lock:
            curl, self._curl = self._curl, None
            if curl is not None:
                curl.close()
            self._sockets.clear()  # closed by libcurl, through the callback or not
