"""The Swift API driver: keep-alive workers, auth v1, each failure seen once and classed.

The HTTP tests run against a small Swift stand-in served by http.server on an
ephemeral 127.0.0.1 port, started and stopped by each test.
"""

import http.client
import socket
import ssl
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from clusters.access.credentials import SwiftCredentials
from clusters.access.inventory import Cluster, Node
from loadgen.drivers import driver_for
from loadgen.exceptions import DriverError
from loadgen.ledger import Entry
from loadgen.payload import PayloadSource
from loadgen.swift_driver import SwiftDriver, exception_class, status_class
from loadgen.verify import verify
from loadgen.workload import parse_workload

USER, KEY = "test:tester", "testing"


class SwiftHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive

    def setup(self):
        self.timeout = self.server.idle_timeout_s  # an idle connection is closed after this
        super().setup()

    def log_message(self, *args):
        pass

    def do_GET(self):
        if self.path.startswith("/auth/"):
            self._auth()
        else:
            self._storage()

    def do_PUT(self):
        self._storage()

    def do_DELETE(self):
        self._storage()

    def _auth(self):
        s = self.server
        if self.headers["X-Auth-User"] != USER or self.headers["X-Auth-Key"] != s.key:
            return self._reply(401)
        with s.lock:
            s.auths += 1
            token = f"tk{s.auths}"
            s.tokens.add(token)
        headers = {"X-Storage-Url": s.storage_url, "X-Auth-Token": token}
        if s.token_lifetime is not None:
            headers["X-Auth-Token-Expires"] = s.token_lifetime
        self._reply(200, headers=headers)

    def _storage(self):
        s = self.server
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        with s.lock:
            s.peers.add(self.client_address)
            s.requests.append((self.command, self.path))
            fail = s.fail_next.pop(0) if s.fail_next else None
        if s.hold:
            s.release.wait(5)
        if fail == "drop":  # close the connection without an answer
            self.close_connection = True
            return
        if s.reject_tokens or self.headers["X-Auth-Token"] not in s.tokens:
            return self._reply(401)
        if fail:
            return self._reply(fail)
        is_container = self.path.count("/") == 3  # /v1/AUTH_test/<container>
        if self.command == "PUT":
            (s.containers if is_container else s.objects).update({self.path: body})
            return self._reply(201)
        if self.command == "GET" and self.path in s.objects:
            return self._reply(200, s.objects[self.path])
        if self.command == "DELETE" and s.objects.pop(self.path, None) is not None:
            return self._reply(204)
        self._reply(404)

    def _reply(self, status, body=b"", headers=None):
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class FakeSwift(ThreadingHTTPServer):
    daemon_threads = False  # server_close() joins every handler thread
    block_on_close = True

    def __init__(self):
        super().__init__(("127.0.0.1", 0), SwiftHandler)
        self.lock = threading.Lock()
        self.key = KEY
        self.idle_timeout_s = 5.0
        self.storage_url = f"http://127.0.0.1:{self.server_port}/v1/AUTH_test"
        self.token_lifetime: str | None = None
        self.auths = 0
        self.tokens: set[str] = set()
        self.reject_tokens = False
        self.containers: dict[str, bytes] = {}
        self.objects: dict[str, bytes] = {}
        self.peers: set[tuple[str, int]] = set()
        self.requests: list[tuple[str, str]] = []
        self.fail_next: list = []  # statuses, or "drop", for the next storage requests
        self.hold = False
        self.release = threading.Event()

    @property
    def auth_url(self):
        return f"http://127.0.0.1:{self.server_port}/auth/v1.0"

    def object_path(self, name, container="faultline-000"):
        return f"/v1/AUTH_test/{container}/{name}"


class Completions:
    """A done callback that keeps every completion, and a wait for n of them."""

    def __init__(self):
        self.results = []
        self._changed = threading.Condition()

    def done(self, ok, nbytes, error, data):
        with self._changed:
            self.results.append((ok, nbytes, error, data))
            self._changed.notify_all()

    def wait(self, n, timeout=5.0):
        with self._changed:
            assert self._changed.wait_for(lambda: len(self.results) >= n, timeout), \
                f"{len(self.results)} of {n} operations completed after {timeout} s"
        return self.results


def closed_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def swift_threads():
    return [t.name for t in threading.enumerate() if t.name.startswith("faultline-swift")]


@pytest.fixture
def swift():
    server = FakeSwift()
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    yield server
    server.release.set()
    server.shutdown()
    thread.join()
    server.server_close()


@pytest.fixture
def make_driver(swift):
    drivers = []

    def make(key=KEY, containers=("faultline-000",), auth_url=None, **options):
        credentials = SwiftCredentials(auth_url or swift.auth_url, USER, key)
        driver = SwiftDriver(credentials, list(containers), **{"concurrency": 2, **options})
        drivers.append(driver)
        return driver

    yield make
    for driver in drivers:
        driver.close()


@pytest.fixture
def driver(make_driver):
    driver = make_driver()
    driver.connect()
    return driver


def one(driver, op, *args):
    completions = Completions()
    getattr(driver, op)(*args, completions.done)
    return completions.wait(1)[0]


# error classes ---------------------------------------------------------------------------


@pytest.mark.parametrize("status", [200, 201, 202, 204])
def test_a_2xx_status_is_no_error(status):
    assert status_class(status) is None


@pytest.mark.parametrize("status", [301, 401, 404, 409, 499, 503, 507])
def test_any_other_status_is_the_error_class_itself(status):
    assert status_class(status) == str(status)


@pytest.mark.parametrize(("exc", "expected"), [
    (TimeoutError("timed out"), "timeout"),
    (ConnectionRefusedError(111, "Connection refused"), "connection"),
    (ConnectionResetError(104, "Connection reset by peer"), "connection"),
    (BrokenPipeError(32, "Broken pipe"), "connection"),
    (OSError(113, "No route to host"), "connection"),
    (ssl.SSLError(1, "certificate verify failed"), "connection"),
    (http.client.RemoteDisconnected("closed"), "connection"),
    (http.client.IncompleteRead(b"", 10), "connection"),
    (ValueError("a bug"), "ValueError"),
])
def test_exceptions_are_classed_timeout_connection_or_by_name(exc, expected):
    assert exception_class(exc) == expected


# connect -------------------------------------------------------------------------------


def test_connect_creates_exactly_the_named_containers(swift, make_driver):
    make_driver(containers=["faultline-000", "faultline-001"]).connect()

    assert sorted(swift.containers) == ["/v1/AUTH_test/faultline-000",
                                        "/v1/AUTH_test/faultline-001"]
    assert swift.objects == {}


def test_connect_with_a_wrong_key_names_the_url_and_the_user(swift, make_driver):
    with pytest.raises(DriverError) as raised:
        make_driver(key="wrong").connect()

    assert str(raised.value) == (f"Swift auth at {swift.auth_url} refused user test:tester: "
                                 "401 Unauthorized")


def test_connect_to_an_unreachable_auth_says_it_cannot_reach_it(make_driver):
    url = f"http://127.0.0.1:{closed_port()}/auth/v1.0"

    with pytest.raises(DriverError) as raised:
        make_driver(auth_url=url).connect()

    assert str(raised.value) == f"cannot reach Swift auth at {url}: [Errno 111] Connection refused"


def test_connect_reports_a_container_that_cannot_be_created(swift, make_driver):
    swift.fail_next = [507]

    with pytest.raises(DriverError) as raised:
        make_driver().connect()

    assert str(raised.value) == (f"cannot create container 'faultline-000' at "
                                 f"{swift.storage_url}: 507 Insufficient Storage")


def test_operations_before_connect_are_refused(make_driver):
    with pytest.raises(DriverError, match="not connected"):
        make_driver().write("faultline-000", "o", b"x", Completions().done)


# operations ----------------------------------------------------------------------------


def test_a_written_object_reads_back_with_its_content_and_byte_counts(swift, driver):
    assert one(driver, "write", "faultline-000", "o1", b"hello") == (True, 5, None, None)
    assert one(driver, "read", "faultline-000", "o1", 5) == (True, 5, None, b"hello")
    assert one(driver, "delete", "faultline-000", "o1") == (True, 0, None, None)
    assert swift.objects == {}


def test_container_and_object_names_are_url_quoted(swift, make_driver):
    driver = make_driver(containers=["fault line"])
    driver.connect()

    one(driver, "write", "fault line", "a b/ü?#%", b"x")

    assert swift.requests[-1] == ("PUT", "/v1/AUTH_test/fault%20line/a%20b/%C3%BC%3F%23%25")


def test_a_read_of_a_missing_object_is_404_which_verify_counts_as_missing(driver):
    assert one(driver, "read", "faultline-000", "absent", 10) == (False, 0, "404", None)

    payloads = PayloadSource(seed=1, min_size=8, max_size=8)
    result = verify(driver, [Entry("faultline-000", "absent", 8)], payloads, timeout_s=5)
    assert result.missing == ["faultline-000/absent"]


def test_a_delete_of_a_missing_object_is_an_error_404(driver):
    assert one(driver, "delete", "faultline-000", "absent") == (False, 0, "404", None)


@pytest.mark.parametrize("status", [500, 503, 507])
def test_a_server_error_is_reported_with_its_status(swift, driver, status):
    swift.fail_next = [status]

    assert one(driver, "write", "faultline-000", "o1", b"x") == (False, 0, str(status), None)


def test_an_answer_slower_than_the_read_timeout_is_a_timeout(swift, make_driver):
    driver = make_driver(read_timeout_s=0.2)
    driver.connect()
    swift.hold = True

    assert one(driver, "read", "faultline-000", "o1", 1) == (False, 0, "timeout", None)


def test_a_refused_storage_connection_is_a_connection_error(swift, make_driver):
    swift.storage_url = f"http://127.0.0.1:{closed_port()}/v1/AUTH_test"
    driver = make_driver(containers=[])
    driver.connect()

    assert one(driver, "write", "faultline-000", "o1", b"x") == (False, 0, "connection", None)


# connections ---------------------------------------------------------------------------


def test_requests_reuse_one_keep_alive_connection_per_worker(swift, driver):
    swift.peers.clear()  # connect() created the container on a connection of its own
    for i in range(20):
        assert one(driver, "write", "faultline-000", f"o{i}", b"x")[0]

    assert len(swift.peers) <= 2
    assert driver.connections_opened <= 2


def test_a_broken_connection_fails_its_request_once_and_is_reopened(swift, make_driver):
    driver = make_driver(concurrency=1)
    driver.connect()
    swift.fail_next = ["drop"]

    assert one(driver, "write", "faultline-000", "o1", b"x") == (False, 0, "connection", None)
    assert one(driver, "write", "faultline-000", "o2", b"x") == (True, 1, None, None)
    assert [path for _, path in swift.requests[1:]] == [swift.object_path("o1"),
                                                         swift.object_path("o2")]  # no retry
    assert driver.connections_opened == 2


def test_an_idle_connection_the_server_closed_is_reopened_without_an_error(swift, make_driver):
    swift.idle_timeout_s = 0.2
    driver = make_driver(concurrency=1)
    driver.connect()
    assert one(driver, "write", "faultline-000", "o1", b"x")[0]

    time.sleep(0.5)  # the server closes the idle connection

    assert one(driver, "write", "faultline-000", "o2", b"x") == (True, 1, None, None)
    assert driver.connections_opened == 2


# auth ----------------------------------------------------------------------------------


def test_a_401_reauthenticates_once_and_the_request_succeeds(swift, driver):
    swift.tokens.clear()  # the token was revoked

    assert one(driver, "write", "faultline-000", "o1", b"x") == (True, 1, None, None)
    assert swift.auths == 2


def test_a_401_after_reauthentication_is_reported(swift, driver):
    swift.reject_tokens = True

    assert one(driver, "write", "faultline-000", "o1", b"x") == (False, 0, "401", None)
    assert swift.auths == 2
    assert swift.requests[1:] == [("PUT", swift.object_path("o1"))] * 2


def test_a_token_about_to_expire_is_renewed_before_it_is_used(swift, driver):
    swift.token_lifetime = "1"  # renewed after half its life when that is under a minute
    swift.tokens.clear()
    one(driver, "write", "faultline-000", "o1", b"x")
    assert swift.auths == 2

    time.sleep(0.6)

    assert one(driver, "write", "faultline-000", "o2", b"x")[0]
    assert swift.auths == 3
    assert swift.requests[-1] == ("PUT", swift.object_path("o2"))  # no 401 on the way


def test_workers_share_one_token_renewed_once_after_a_revocation(swift, make_driver):
    driver = make_driver(concurrency=8)
    driver.connect()
    swift.tokens.clear()
    completions = Completions()

    for i in range(32):
        driver.write("faultline-000", f"o{i}", b"x", completions.done)

    assert all(ok for ok, *_ in completions.wait(32))
    assert swift.auths == 2


# close ---------------------------------------------------------------------------------


def test_close_lets_queued_requests_finish_and_stops_every_worker(swift, driver):
    completions = Completions()
    for i in range(10):
        driver.write("faultline-000", f"o{i}", b"x", completions.done)

    driver.close()

    assert [ok for ok, *_ in completions.results] == [True] * 10
    assert swift_threads() == []


def test_close_aborts_what_is_left_after_the_drain_and_returns_promptly(swift, make_driver):
    driver = make_driver(concurrency=1)
    driver.connect()
    swift.hold = True
    completions = Completions()
    for i in range(3):
        driver.write("faultline-000", f"o{i}", b"x", completions.done)
    time.sleep(0.1)  # the first request is on the wire

    started = time.monotonic()
    driver.close(drain_s=0.2)

    assert time.monotonic() - started < 2
    assert completions.results == [(False, 0, "aborted", None)] * 3
    assert swift_threads() == []


def test_operations_after_close_are_refused(driver):
    driver.close()

    with pytest.raises(DriverError, match="closed"):
        driver.read("faultline-000", "o1", 1, Completions().done)


# driver_for ----------------------------------------------------------------------------

NODES = (Node(name="node1", address="127.0.0.1"),)
SWIFT_API = {"auth_url": "http://127.0.0.1:7480/auth/1.0", "user": "faultline:swift",
             "key_env": "FAULTLINE_TEST_RGW_KEY"}


def ceph(**client):
    return Cluster(name="lab-ceph", kind="ceph", nodes=NODES,
                   client={"conf": "/etc/ceph/ceph.conf", **client})


def swift_cluster():
    return Cluster(name="lab-swift", kind="swift", nodes=NODES, client={
        "auth_url": "http://127.0.0.1:8280/auth/v1.0", "user": USER,
        "key_env": "FAULTLINE_TEST_SWIFT_KEY"})


@pytest.fixture
def keys(monkeypatch):
    monkeypatch.setenv("FAULTLINE_TEST_RGW_KEY", "rgw-key")
    monkeypatch.setenv("FAULTLINE_TEST_SWIFT_KEY", KEY)


def test_a_ceph_cluster_is_loaded_through_rados_by_default(monkeypatch):
    built = {}
    monkeypatch.setattr("loadgen.rados_driver.RadosDriver", lambda **kw: built.update(kw))

    driver_for(ceph(pool="bench"), parse_workload({"containers": 1}))

    assert built == {"conf": "/etc/ceph/ceph.conf", "pool": "bench",
                     "containers": ["faultline-000"], "keyring": None}


def test_swift_on_a_ceph_cluster_uses_the_rgw_credentials(keys):
    driver = driver_for(ceph(swift_api=SWIFT_API), parse_workload({}), api="swift")

    assert isinstance(driver, SwiftDriver)
    assert driver._auth.credentials == SwiftCredentials(SWIFT_API["auth_url"],
                                                        "faultline:swift", "rgw-key")


def test_a_swift_cluster_is_loaded_through_swift_by_default(keys):
    driver = driver_for(swift_cluster(), parse_workload({"containers": 2}))

    assert isinstance(driver, SwiftDriver)
    assert driver.containers == ["faultline-000", "faultline-001"]


@pytest.mark.parametrize(("max_in_flight", "workers"), [(8, 8), (64, 64), (1024, 64)])
def test_swift_workers_are_max_in_flight_capped_at_64(keys, max_in_flight, workers):
    driver = driver_for(swift_cluster(), parse_workload({"max_in_flight": max_in_flight}))

    assert driver.concurrency == workers


@pytest.mark.parametrize(("cluster", "api", "message"), [
    (swift_cluster(), "rados",
     "load API 'rados' does not apply to swift cluster 'lab-swift' (valid: swift, s3)"),
    (ceph(), "nfs",
     "load API 'nfs' is unknown for ceph cluster 'lab-ceph' (valid: rados, swift, s3)"),
])
def test_an_api_that_does_not_fit_the_cluster_names_the_valid_ones(cluster, api, message):
    with pytest.raises(DriverError) as raised:
        driver_for(cluster, parse_workload({}), api=api)

    assert str(raised.value) == message
