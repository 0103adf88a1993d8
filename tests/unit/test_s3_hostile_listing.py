"""An S3 endpoint is not trusted: a listing whose XML declares entities (an expansion bomb,
an external entity naming a local file) is one "bad listing" error, soon, and nothing of it
is expanded or read. The server here is a plain HTTP server on 127.0.0.1 that answers every
bucket PUT with 200 and every GET with the page under test."""

import threading
import time
from http.server import BaseHTTPRequestHandler

import pytest
from local_http import serving

from clusters.access.credentials import S3Credentials
from loadgen.s3_driver import S3Driver

BOMB = (b'<?xml version="1.0"?>\n<!DOCTYPE lolz [\n<!ENTITY lol "lollollollollollollollollollol">\n'
        + b"".join(b'<!ENTITY lol%d "%s">\n'
                   % (i, (b"&lol%d;" % (i - 1) if i > 1 else b"&lol;") * 10)
                   for i in range(1, 10))
        + b"]>\n<ListBucketResult><IsTruncated>false</IsTruncated><Contents><Key>&lol9;</Key>"
          b"</Contents></ListBucketResult>")
EXTERNAL = (b'<?xml version="1.0"?>\n<!DOCTYPE r [<!ENTITY secret SYSTEM "file:///etc/passwd">]>'
            b"<ListBucketResult><IsTruncated>false</IsTruncated><Contents><Key>&secret;</Key>"
            b"</Contents></ListBucketResult>")
PLAIN = (b'<?xml version="1.0"?><ListBucketResult><IsTruncated>false</IsTruncated>'
         b"<Contents><Key>obj-1</Key></Contents><Contents><Key>obj-2</Key></Contents>"
         b"</ListBucketResult>")


class _Answer(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_PUT(self):  # noqa: N802 - http.server's names
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self._send(b"")

    def do_GET(self):  # noqa: N802
        self._send(self.server.page)

    def _send(self, body: bytes) -> None:
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    with serving(_Answer) as httpd:
        yield httpd


@pytest.fixture(params=["AKID", "test:tester"], ids=["libcurl", "sigv4"])
def access_key(request):
    """Both signing paths: libcurl's, and loadgen/sigv4.py's for a key libcurl would
    encode."""
    return request.param


def _list(server, page: bytes, access_key: str) -> tuple[tuple, float]:
    server.page = page
    credentials = S3Credentials(f"http://127.0.0.1:{server.server_address[1]}", access_key,
                                "secret")
    driver = S3Driver(credentials, ["faultline-hostile"], concurrency=1)
    assert driver.signing == ("libcurl" if access_key == "AKID" else "sigv4")
    driver.connect()
    answered = threading.Event()
    got: list[tuple] = []

    def done(ok, nbytes, error, data):
        got.append((ok, error, data))
        answered.set()

    try:
        started = time.monotonic()
        driver.list("faultline-hostile", done)
        assert answered.wait(10), "the list never completed"
        return got[0], time.monotonic() - started
    finally:
        driver.close()


def test_a_plain_listing_gives_its_names(server, access_key):
    (ok, error, data), _ = _list(server, PLAIN, access_key)
    assert (ok, error, data) == (True, None, b"obj-1\nobj-2")


@pytest.mark.parametrize("page", [BOMB, EXTERNAL], ids=["entity-bomb", "external-entity"])
def test_a_listing_that_declares_entities_is_a_bad_listing_and_nothing_is_expanded(
        server, page, access_key):
    (ok, error, data), seconds = _list(server, page, access_key)
    assert (ok, error) == (False, "bad listing")
    assert data is None or b"root:" not in data and b"lol" not in data
    assert seconds < 2.0, f"a hostile listing took {seconds:.1f} s to refuse"
