"""The load's history for the consistency checker: outcomes of error classes, versioned
payloads, the ledger's versions, the open loop's overwrites, and the verify's final reads,
with a driver that keeps objects in a dict (and can serve an old version on purpose)."""

import time

import pytest
from test_openloop import FakeDriver, run_to_end

from loadgen.consistency import FAILED, OK, UNKNOWN
from loadgen.history_log import HistoryLog
from loadgen.ledger import Ledger
from loadgen.openloop import OpenLoop
from loadgen.outcomes import outcome
from loadgen.payload import PayloadSource
from loadgen.samples import SampleRecorder
from loadgen.verify import verify
from loadgen.workload import parse_workload

K = ("faultline-000", "obj-1")


@pytest.mark.parametrize(("ok", "error", "expected"), [
    (True, None, OK),
    (False, "404", FAILED), (False, "404 NoSuchKey", FAILED), (False, "409", FAILED),
    (False, "503", UNKNOWN), (False, "500 InternalError", UNKNOWN),
    (False, "ENOENT", FAILED), (False, "ENOSPC", FAILED),
    (False, "timeout", UNKNOWN), (False, "EIO", UNKNOWN), (False, "connection", UNKNOWN),
    (False, "aborted", UNKNOWN), (False, None, UNKNOWN), (False, "corrupt", UNKNOWN),
])
def test_an_error_class_says_whether_the_operation_may_have_taken_effect(ok, error, expected):
    assert outcome(ok, error) == expected


def test_each_version_of_a_name_has_its_own_bytes_and_version_0_kept_the_old_ones():
    payloads = PayloadSource(seed=3, min_size=100, max_size=200)
    assert payloads.content("x", None, 0) == payloads.content("x")
    versions = [payloads.content("x", None, v) for v in range(5)]
    assert len(set(versions)) == 5
    for v, data in enumerate(versions):
        assert payloads.matches("x", len(data), data, v)
        assert not payloads.matches("x", len(data), data, v + 1)


def test_the_ledger_hands_out_new_versions_and_keeps_the_newest_acknowledged():
    ledger = Ledger()
    ledger.add(*K, 10)
    assert [ledger.next_version(*K) for _ in range(3)] == [1, 2, 3]
    ledger.add(*K, 30, 3)
    ledger.add(*K, 20, 2)  # acknowledged after a newer one: the ledger keeps version 3
    assert ledger.entries()[0].version == 3 and ledger.entries()[0].size == 30


def test_a_read_is_matched_to_its_version_and_bytes_of_no_version_are_not_recorded():
    payloads = PayloadSource(seed=1, min_size=64, max_size=64)
    log = HistoryLog(payloads)
    for version in (0, 1):
        log.issued_write(K, version, 64)
        log.wrote(K, version, version * 10.0, version * 10.0 + 1, True, None)
    assert log.read(K, 20.0, 21.0, True, None, payloads.content(K[1], 64, 0))
    assert not log.read(K, 22.0, 23.0, True, None, b"x" * 64)
    assert [r.version for r in log.history.reads] == [0]
    result = log.result(0.0)
    assert result["classes"]["stale"]["count"] == 1
    assert result["classes"]["stale"]["examples"] == ["faultline-000/obj-1"]


def test_a_timed_out_write_and_an_acknowledged_delete_are_what_the_verify_reads_again():
    log = HistoryLog(PayloadSource(seed=1, min_size=8, max_size=8))
    log.issued_write(K, 0, 8)
    log.wrote(K, 0, 1.0, 2.0, False, "timeout")
    log.deleted(("faultline-000", "gone"), 3.0, 4.0, False, "ENOENT")  # not there: done
    assert log.unknown_writes() == [(K, 0, 8)]
    assert log.deleted_keys() == [("faultline-000", "gone")]


def test_the_history_is_bounded_and_says_what_it_left_out():
    log = HistoryLog(PayloadSource(seed=1, min_size=8, max_size=8), limit=3)
    for i in range(5):
        log.deleted(("c", f"o{i}"), i, i + 0.5, True, None)
    assert len(log.history.deletes) == 3
    assert log.result(0.0)["left_out"] == 2


def test_a_version_read_whose_write_the_full_history_left_out_is_not_unexpected():
    payloads = PayloadSource(seed=1, min_size=8, max_size=8)
    log = HistoryLog(payloads, limit=2)
    log.issued_write(K, 0, 8)
    log.wrote(K, 0, 0.0, 1.0, True, None)
    log.issued_write(K, 1, 8)
    assert log.read(K, 1.5, 1.6, True, None, payloads.content(K[1], 8, 1))  # the 2nd op
    log.wrote(K, 1, 1.0, 2.0, True, None)  # acknowledged, but the history is full
    classes = log.result(0.0)["classes"]
    assert log.left_out == 1
    assert {kind: c["count"] for kind, c in classes.items() if c["count"]} == {}


def test_a_listing_keeps_the_load_s_names_and_one_it_never_wrote_is_unexpected():
    payloads = PayloadSource(seed=1, min_size=8, max_size=8)
    log = HistoryLog(payloads, prefix="r7-ab12cd-")
    for name in ("r7-ab12cd-0", "r7-ab12cd-1"):
        log.issued_write(("c", name), 0, 8)
    log.wrote(("c", "r7-ab12cd-0"), 0, 0.0, 1.0, True, None)  # -1: issued, still in flight
    log.listed("c", 5.0, 5.1, frozenset({"r7-ab12cd-0", "r7-ab12cd-1", "r7-ab12cd-9",
                                         "r6-ffffff-0", "other"}))
    assert log.history.listings[0].names == {"r7-ab12cd-0", "r7-ab12cd-1", "r7-ab12cd-9"}
    unexpected = log.result(1.0)["classes"]["unexpected"]
    assert unexpected["count"] == 1 and unexpected["examples"] == ["c/r7-ab12cd-9"]


def test_the_last_change_is_a_write_or_a_delete():
    log = HistoryLog(PayloadSource(seed=1, min_size=8, max_size=8))
    assert log.last_change_end() == 0.0
    log.wrote(K, 0, 0.0, 1.0, True, None)
    log.deleted(K, 2.0, 3.0, True, None)
    assert log.last_change_end() == 3.0


def test_a_listing_weighs_as_many_operations_as_it_holds_names():
    log = HistoryLog(PayloadSource(seed=1, min_size=8, max_size=8), limit=10)
    log.listed("c", 0.0, 0.1, frozenset(f"o{i}" for i in range(8)))
    log.listed("c", 1.0, 1.1, frozenset(f"o{i}" for i in range(8)))  # 16 > 10: left out
    log.listed("c", 2.0, 2.1, frozenset())  # an empty listing weighs one
    log.deleted(("c", "o1"), 3.0, 3.5, True, None)
    assert len(log.history.listings) == 2 and len(log.history.deletes) == 1
    assert log.result(0.0)["left_out"] == 1


class OldVersionDriver(FakeDriver):
    """Keeps every version written; `serve_old` makes reads return an object's first one
    (a replica that missed the overwrites)."""

    def __init__(self):
        super().__init__()
        self.first = {}
        self.serve_old = False

    def write(self, container, name, data, done):
        self.first.setdefault((container, name), data)
        super().write(container, name, data, done)

    def read(self, container, name, size, done):
        if self.serve_old and (container, name) in self.first:
            data = self.first[(container, name)]
            done(True, len(data), None, data)
            return
        super().read(container, name, size, done)


def _loop(driver, payloads, mix, ledger, history):
    workload = parse_workload({"duration_s": 0.5, "rate": 200, "mix": mix,
                               "objects_per_container": 0, "prefill": False})
    recorder = SampleRecorder(wall_start=time.time(), mono_start=time.monotonic())
    return OpenLoop(driver, workload, recorder, ledger, payloads, "obj", history=history)


def test_overwrites_write_new_versions_that_reads_and_the_verify_accept():
    payloads, ledger = PayloadSource(seed=1, min_size=32, max_size=96), Ledger()
    driver = OldVersionDriver()
    history = HistoryLog(payloads)
    loop = _loop(driver, payloads, {"write": 30, "overwrite": 40, "read": 30}, ledger, history)
    run_to_end(loop)
    assert max(e.version for e in ledger.entries()) >= 1
    errors = sum(s.error_count for s in loop.recorder.take_all(time.monotonic(),
                                                                 loop.workload.ops()))
    assert errors == 0
    result = verify(driver, ledger.entries(), payloads, history=history)
    assert result.ok and result.checked == len(ledger.entries())
    classes = result.consistency["classes"]
    assert all(classes[kind]["count"] == 0 for kind in classes), classes


def test_a_replica_serving_the_first_version_after_overwrites_is_stale_not_corrupt():
    payloads, ledger = PayloadSource(seed=1, min_size=32, max_size=32), Ledger()
    driver = OldVersionDriver()
    history = HistoryLog(payloads)
    run_to_end(_loop(driver, payloads, {"write": 30, "overwrite": 70}, ledger, history))
    overwritten = [e for e in ledger.entries() if e.version > 0]
    assert overwritten
    driver.serve_old = True
    result = verify(driver, ledger.entries(), payloads, history=history)
    assert not result.corrupt and not result.missing
    stale = result.consistency["classes"]["stale"]
    assert stale["count"] == len(overwritten)
    assert stale["max_since_ack_s"] > 0


def test_an_object_read_back_after_its_delete_was_acknowledged_is_resurrected():
    payloads, ledger = PayloadSource(seed=1, min_size=16, max_size=16), Ledger()
    driver = OldVersionDriver()
    history = HistoryLog(payloads)
    run_to_end(_loop(driver, payloads, {"write": 50, "delete": 50}, ledger, history))
    deleted = history.deleted_keys()
    assert deleted
    driver.objects[deleted[0]] = driver.first[deleted[0]]  # a replica brings it back
    result = verify(driver, ledger.entries(), payloads, history=history)
    resurrected = result.consistency["classes"]["resurrected"]
    # read back by the verify, and listed by it: two observations of one object
    assert resurrected["count"] == 2 and resurrected["objects"] == 1
    assert resurrected["examples"] == ["/".join(deleted[0])]


class UnlistedDriver(OldVersionDriver):
    """Serves every object, but leaves `hidden` out of its listings (a container server
    that missed the update)."""

    hidden: tuple[str, str] | None = None

    def list(self, container, done):
        names = "\n".join(n for c, n in self.objects
                          if c == container and (c, n) != self.hidden).encode()
        done(True, len(names), None, names)


def test_the_verify_lists_each_container_and_an_unlisted_object_is_a_listing_gap():
    payloads, ledger = PayloadSource(seed=1, min_size=16, max_size=16), Ledger()
    driver = UnlistedDriver()
    history = HistoryLog(payloads)
    run_to_end(_loop(driver, payloads, {"write": 100}, ledger, history))
    driver.hidden = (ledger.entries()[0].container, ledger.entries()[0].name)
    began = time.monotonic()
    result = verify(driver, ledger.entries(), payloads, history=history)
    record = result.consistency
    assert record["listings"] == 1 and record["listing_delay_s"] == 1.0
    assert record["classes"]["listing_gap"]["objects"] == 1
    assert record["classes"]["listing_gap"]["examples"] == ["/".join(driver.hidden)]
    assert record["classes"]["listing_gap"]["max_since_ack_s"] >= 1.0
    assert time.monotonic() - began < 2.0  # waited the delay after the last write, no more
    assert result.ok  # a gap in a listing loses no object
