"""The consistency checker on the Swift lab, against inconsistencies planted behind Swift's
back on one object server's disk (as a replica that missed an update would hold them):
an old version put back after an overwrite is read through the proxy as stale, and an
object put back after its delete was acknowledged is served as resurrected. The reads
are the verify's (loadgen.verify with the load's history), through Faultline's own Swift
driver; the planted files are removed and the object deleted after.

And one Swift makes itself: objects written while a container server is down are missing
from that container replica's listing until the updaters catch up, and the verify's listing
reports them as listing gaps."""

from __future__ import annotations

import shlex
import threading
import time

import pytest

from actions import swift as swift_actions
from clusters.access.ssh import run_on_node
from clusters.faults.replica_swift import SwiftObjects, replica_dirs
from clusters.polling import poll_until
from loadgen.drivers import driver_for
from loadgen.history_log import HistoryLog
from loadgen.ledger import Entry
from loadgen.openloop import container_names, listed_names
from loadgen.payload import PayloadSource
from loadgen.verify import LISTING_DELAY_S, verify
from loadgen.workload import parse_workload

pytestmark = pytest.mark.lab

SIZE = 1024
READS = 30  # the proxy picks a replica at random: a third serve the planted one
CONFIG = {"faultline_cluster": "lab-swift"}
# node3 is zone 2's only node: with one replica per zone, it holds every container
CONTAINER_NODE = "node3"


@pytest.fixture
def planted(swift_cluster):
    """(driver, history, payloads, key, the planting node and its object directory, an
    aside directory there); everything is deleted after."""
    workload = parse_workload({"containers": 1, "objects_per_container": 0,
                               "object_size": SIZE, "mix": {"write": 100}, "rate": 1,
                               "prefill": False})
    driver = driver_for(swift_cluster, workload, "swift")
    driver.connect()
    payloads = PayloadSource(workload.seed, SIZE, SIZE)
    key = (container_names(workload)[0], f"planted-{time.time_ns():x}")
    account = SwiftObjects(swift_cluster).account
    dirs, _, _ = replica_dirs(swift_cluster, account, *key)
    node, path = next(iter(dirs.items()))
    aside = f"/tmp/faultline-planted-{key[1]}"
    yield driver, HistoryLog(payloads), payloads, key, swift_cluster.node(node), path, aside
    try:
        _call(driver.delete, *key)
        run_on_node(swift_cluster.node(node), f"rm -rf {shlex.quote(aside)}")
    finally:
        driver.close()


def _call(operation, *args) -> tuple[bool, str | None]:
    """One driver operation, waited for: (ok, error class)."""
    finished, answer = threading.Event(), []

    def done(ok, nbytes, error, data):
        answer.append((ok, error))
        finished.set()
    operation(*args, done)
    assert finished.wait(60)
    return answer[0]


def _write(driver, history, payloads, key, version) -> None:
    data = payloads.content(key[1], SIZE, version)
    history.issued_write(key, version, SIZE)
    begun = time.monotonic()
    ok, error = _call(driver.write, *key, data)
    history.wrote(key, version, begun, time.monotonic(), ok, error)
    assert ok, error


def _on_node(node, command: str) -> str:
    return run_on_node(node, command, timeout=60).stdout


def _keep_aside(node, path: str, aside: str) -> None:
    """Copy the replica's .data file aside (with its metadata: extended attributes), once
    the PUT's last copy has landed."""
    q, a = shlex.quote(path), shlex.quote(aside)
    _on_node(node, f"for i in $(seq 50); do ls {q}/*.data >/dev/null 2>&1 && break; "
                   f"sleep 0.2; done; mkdir -p {a} && cp -a {q}/*.data {a}/")


def _put_back(node, path: str, aside: str, newer: str) -> None:
    """Once the newer file (.data of the overwrite, .ts of the delete) is there, replace it
    with the copy kept aside: the replica now holds what it held before."""
    q, a = shlex.quote(path), shlex.quote(aside)
    _on_node(node, f"old=$(ls {a}); for i in $(seq 50); do n=$(ls {q} | grep -vxF \"$old\" "
                   f"| grep -F {shlex.quote(newer)}); [ -n \"$n\" ] && break; sleep 0.2; "
                   f"done; [ -n \"$n\" ] || exit 3; rm -f {q}/*.data {q}/*.ts && "
                   f"cp -a {a}/*.data {q}/")


def test_an_old_version_put_back_on_one_replica_is_read_as_stale(planted):
    driver, history, payloads, key, node, path, aside = planted
    _write(driver, history, payloads, key, 0)
    _keep_aside(node, path, aside)
    _write(driver, history, payloads, key, 1)
    _put_back(node, path, aside, ".data")
    entry = Entry(*key, SIZE, 1)
    for _ in range(READS):
        result = verify(driver, [entry], payloads, history=history)
        assert not result.corrupt and not result.missing
        if result.consistency["classes"]["stale"]["count"]:
            break
    stale = result.consistency["classes"]["stale"]
    assert stale["count"] >= 1 and stale["examples"] == ["/".join(key)], result.consistency
    assert stale["max_since_ack_s"] > 0
    assert all(result.consistency["classes"][kind]["count"] == 0
               for kind in ("lost", "resurrected", "unexpected", "recovered"))


def test_an_object_put_back_on_one_replica_after_its_delete_is_resurrected(planted):
    driver, history, payloads, key, node, path, aside = planted
    _write(driver, history, payloads, key, 0)
    _keep_aside(node, path, aside)
    begun = time.monotonic()
    ok, error = _call(driver.delete, *key)
    history.deleted(key, begun, time.monotonic(), ok, error)
    assert ok, error
    # the verify lists no sooner than the listing delay after the last delete: waited out
    # here, so that its reads come back to back before a replicator pass undoes the plant
    time.sleep(LISTING_DELAY_S)
    _put_back(node, path, aside, ".ts")
    for _ in range(READS):
        result = verify(driver, [], payloads, history=history)
        if result.consistency["classes"]["resurrected"]["count"]:
            break
    resurrected = result.consistency["classes"]["resurrected"]
    assert resurrected["count"] >= 1 and resurrected["examples"] == ["/".join(key)]
    assert result.consistency["classes"]["unexpected"]["count"] == 0


def test_an_object_of_the_load_s_names_it_never_wrote_is_unexpected(planted):
    driver, _, payloads, key, *_ = planted
    history = HistoryLog(payloads, prefix=key[1])  # the load's names: the key's and after
    _write(driver, history, payloads, key, 0)
    stray = (key[0], f"{key[1]}-stray")  # behind the load's back
    ok, error = _call(driver.write, *stray, payloads.content(stray[1], SIZE))
    assert ok, error
    try:
        result = verify(driver, [Entry(*key, SIZE, 0)], payloads, history=history)
    finally:
        _call(driver.delete, *stray)
    unexpected = result.consistency["classes"]["unexpected"]
    assert unexpected["count"] == 1 and unexpected["examples"] == ["/".join(stray)]
    assert result.ok and all(result.consistency["classes"][kind]["count"] == 0
                             for kind in ("lost", "stale", "resurrected", "listing_gap"))


def _gaps_after_writes_with_a_container_server_down(driver, history, payloads, container,
                                                   names) -> dict:
    swift_actions.kill_server(server="container", node=CONTAINER_NODE, configuration=CONFIG)
    try:
        for name in names:  # the object servers keep node3's update as an async pending
            _write(driver, history, payloads, (container, name), 0)
    finally:
        swift_actions.start_server(server="container", node=CONTAINER_NODE,
                                   configuration=CONFIG)
    for _ in range(READS):  # until a listing is served by node3's replica
        result = verify(driver, [], payloads, history=history)
        gaps = result.consistency["classes"]["listing_gap"]
        if gaps["objects"]:
            break
    assert result.consistency["listings"] >= 1
    assert all(result.consistency["classes"][kind]["count"] == 0
               for kind in ("lost", "stale", "resurrected", "unexpected")), result.consistency
    return gaps


def test_writes_while_a_container_server_is_down_are_listing_gaps(swift_cluster):
    workload = parse_workload({"containers": 1, "objects_per_container": 0,
                               "object_size": SIZE, "mix": {"write": 100}, "prefill": False})
    driver = driver_for(swift_cluster, workload, "swift")
    driver.connect()
    payloads, history = PayloadSource(workload.seed, SIZE, SIZE), None
    container = container_names(workload)[0]
    names: list[str] = []
    try:
        # the replicators and updaters (30 s passes) may mend node3 before the first
        # listing: a second round then
        for _ in range(2):
            history = HistoryLog(payloads)
            batch = [f"gap-{time.time_ns():x}-{i}" for i in range(20)]
            names += batch
            gaps = _gaps_after_writes_with_a_container_server_down(
                driver, history, payloads, container, batch)
            if gaps["objects"]:
                break
        assert gaps["objects"] >= 1, gaps
        assert set(gaps["examples"]) <= {f"{container}/{n}" for n in names}
        assert gaps["max_since_ack_s"] >= 1.0  # the stated delay: 1 s after the write

        # and Swift catches up: every replica lists every object again
        def whole() -> bool:
            listings = [_listing(driver, container) for _ in range(6)]
            return all(set(names) <= listing for listing in listings)
        poll_until("every replica listing every object", whole, timeout_s=180, interval_s=5)
    finally:
        for name in names:
            _call(driver.delete, container, name)
        driver.close()


def _listing(driver, container: str) -> frozenset[str]:
    finished, answer = threading.Event(), []

    def done(ok, nbytes, error, data):
        answer.append(listed_names(data) if ok else frozenset())
        finished.set()
    driver.list(container, done)
    assert finished.wait(60)
    return answer[0]
