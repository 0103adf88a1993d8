"""loadgen/curl_http.CurlConnection against plain sockets on 127.0.0.1: a refused connect
and a silent server are the classes http.client's failures have ("connection",
"timeout"), an interrupt from another thread ends a blocked request at once, and a
keep-alive connection is opened once for many requests."""

import socket
import threading
import time
from http.server import BaseHTTPRequestHandler

import pytest
from local_http import serving

from clusters.access.credentials import S3Credentials
from loadgen.curl_http import CurlConnection
from loadgen.swift_http import Endpoint, exception_class

SIGNING = S3Credentials("http://unused", "AKID", "secret")


class _Ok(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):  # noqa: N802 - http.server's names
        body = self.headers.get("Authorization", "").encode()
        self.send_response(200, "Fine")
        self.send_header("ETag", '"abc"')
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def ok_server():
    with serving(_Ok) as httpd:
        yield Endpoint.parse(f"http://127.0.0.1:{httpd.server_address[1]}/")


@pytest.fixture
def silent_server():
    """Accepts connections and never answers."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    yield Endpoint.parse(f"http://127.0.0.1:{listener.getsockname()[1]}/")
    listener.close()


def test_requests_are_signed_and_share_one_kept_alive_connection(ok_server):
    conn = CurlConnection(5, 5, SIGNING)
    try:
        answers = [conn.request(ok_server, "GET", f"/bucket/o{i}", {}) for i in range(5)]
    finally:
        conn.close()
    assert [a.status for a in answers] == [200] * 5
    assert answers[0].reason == "Fine" and answers[0].headers.get("etag") == '"abc"'
    assert answers[0].body.startswith(b"AWS4-HMAC-SHA256 Credential=AKID/")
    assert conn.opened == 1


def test_a_refused_connect_is_a_connection_failure():
    free = socket.socket()
    free.bind(("127.0.0.1", 0))
    port = free.getsockname()[1]
    free.close()  # nothing listens there now
    conn = CurlConnection(2, 2, SIGNING)
    with pytest.raises(OSError) as failure:
        conn.request(Endpoint.parse(f"http://127.0.0.1:{port}/"), "GET", "/b/o", {})
    assert exception_class(failure.value) == "connection"


def test_a_server_that_never_answers_is_a_timeout(silent_server):
    conn = CurlConnection(2, 1, SIGNING)
    started = time.monotonic()
    with pytest.raises(TimeoutError) as failure:
        conn.request(silent_server, "GET", "/b/o", {})
    assert exception_class(failure.value) == "timeout"
    assert time.monotonic() - started < 5


def test_an_interrupt_ends_a_blocked_request_at_once(silent_server):
    conn = CurlConnection(2, 30, SIGNING)
    failed: list[BaseException] = []

    def blocked():
        try:
            conn.request(silent_server, "PUT", "/b/o", {}, b"x" * 4096)
        except BaseException as exc:
            failed.append(exc)

    thread = threading.Thread(target=blocked)
    thread.start()
    time.sleep(0.5)  # connected and waiting for an answer
    started = time.monotonic()
    conn.interrupt()
    thread.join(5)
    assert not thread.is_alive() and time.monotonic() - started < 2
    assert len(failed) == 1 and exception_class(failed[0]) == "connection"
    conn.close()
