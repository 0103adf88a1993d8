"""`head` and `list` through each driver on the real labs: librados on the Ceph lab, the
Swift API on the Swift lab, S3 on both (RGW, s3api). A head finds an acknowledged object and
classes an absent one as the API says "not there"; a list reads the whole container, page
after page (the HTTP drivers are given two-name pages here), and shows what was written and
not what was deleted. The Swift and S3-on-Swift cases run in the side stream."""

from __future__ import annotations

import threading
import time

import pytest

from loadgen.drivers import driver_for
from loadgen.openloop import container_names, listed_names
from loadgen.payload import PayloadSource
from loadgen.workload import parse_workload

pytestmark = pytest.mark.lab

CASES = [("ceph", "rados"), ("ceph", "s3"), ("swift", "swift"), ("swift", "s3")]
ABSENT = {"rados": "ENOENT", "swift": "404", "s3": "404"}  # a HEAD has no body: no S3 code


@pytest.fixture
def driver(system, api, request):
    cluster = request.getfixturevalue(f"{system}_cluster")
    workload = parse_workload({"containers": 1, "objects_per_container": 0,
                               "mix": {"write": 100}, "prefill": False})
    made = driver_for(cluster, workload, api)
    made.listing_page = 2  # the HTTP drivers' page size; librados walks its own
    made.connect()
    yield made
    made.close()


def _call(operation, *args) -> tuple[bool, str | None, bytes | None]:
    finished, answer = threading.Event(), []

    def done(ok, nbytes, error, data):
        answer.append((ok, error, data))
        finished.set()
    operation(*args, done)
    assert finished.wait(60), f"{operation.__name__} never completed"
    return answer[0]


# "system" sends the Swift lab's cases to the side stream (tests/integration/streams.py)
@pytest.mark.parametrize(("system", "api"), CASES, ids=[f"{s}-{a}" for s, a in CASES])
def test_a_head_finds_what_was_written_and_a_list_reads_every_page(system, api, driver):
    container = container_names(parse_workload({"containers": 1}))[0]
    payloads = PayloadSource(3, 64, 64)
    names = [f"listed-{time.time_ns():x}-{i}" for i in range(5)]
    try:
        for name in names:
            ok, error, _ = _call(driver.write, container, name, payloads.content(name))
            assert ok, error
        assert _call(driver.head, container, names[0])[:2] == (True, None)
        assert _call(driver.head, container, "never-written")[:2] == (False, ABSENT[api])

        ok, error, data = _call(driver.list, container)
        assert ok, error
        assert set(names) <= listed_names(data)  # and whatever else the container holds
        assert _call(driver.delete, container, names[0])[0]
        ok, error, data = _call(driver.list, container)
        assert ok and names[0] not in listed_names(data) and set(names[1:]) <= listed_names(data)
    finally:
        for name in names[1:]:
            _call(driver.delete, container, name)
