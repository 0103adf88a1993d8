"""The verify phase: every acknowledged object read back; missing, corrupt, unreadable."""

import threading
import time

import pytest

from loadgen.history_log import HistoryLog
from loadgen.ledger import Entry
from loadgen.payload import PayloadSource
from loadgen.verify import verify


class MemoryDriver:
    """Reads from a dict; completes from another thread like a real driver."""

    def __init__(self, objects, errors=None):
        self.objects = objects
        self.errors = errors or {}  # name -> error class

    def read(self, container, name, size, done):
        def finish():
            if name in self.errors:
                done(False, 0, self.errors[name], None)
            elif (container, name) not in self.objects:
                done(False, 0, "ENOENT", None)
            else:
                data = self.objects[(container, name)]
                done(True, len(data), None, data)
        threading.Thread(target=finish).start()


@pytest.fixture(scope="module")
def payloads():
    return PayloadSource(seed=1, min_size=32, max_size=64)


def stored(payloads, n):
    """n entries and a store holding each one's right content."""
    entries = [Entry("faultline-000", f"o{i}", payloads.size_of(f"o{i}")) for i in range(n)]
    objects = {(e.container, e.name): payloads.content(e.name, e.size) for e in entries}
    return entries, objects


def test_intact_objects_verify_ok(payloads):
    entries, objects = stored(payloads, 50)

    result = verify(MemoryDriver(objects), entries, payloads, concurrency=4)

    assert result.ok
    assert result.checked == 50
    assert result.as_dict()["lost_objects"] == 0


def test_a_missing_object_is_lost(payloads):
    entries, objects = stored(payloads, 10)
    del objects[("faultline-000", "o3")]

    result = verify(MemoryDriver(objects), entries, payloads)

    assert result.missing == ["faultline-000/o3"]
    assert result.corrupt == []
    assert not result.ok


def test_a_swift_404_is_missing_too(payloads):
    entries, objects = stored(payloads, 3)

    result = verify(MemoryDriver(objects, errors={"o1": "404"}), entries, payloads)

    assert result.missing == ["faultline-000/o1"]


def test_altered_content_is_corrupt(payloads):
    entries, objects = stored(payloads, 10)
    data = objects[("faultline-000", "o5")]
    objects[("faultline-000", "o5")] = bytes([data[0] ^ 1]) + data[1:]

    result = verify(MemoryDriver(objects), entries, payloads)

    assert result.corrupt == ["faultline-000/o5"]
    assert result.missing == []


def test_truncated_content_is_corrupt(payloads):
    entries, objects = stored(payloads, 2)
    objects[("faultline-000", "o0")] = objects[("faultline-000", "o0")][:-1]

    result = verify(MemoryDriver(objects), entries, payloads)

    assert result.corrupt == ["faultline-000/o0"]


def test_another_read_error_is_unreadable_not_lost(payloads):
    entries, objects = stored(payloads, 3)

    result = verify(MemoryDriver(objects, errors={"o2": "timeout"}), entries, payloads)

    assert result.unreadable == {"faultline-000/o2": "timeout"}
    assert result.missing == []
    assert not result.ok


def test_as_dict_counts_each_kind_of_failure(payloads):
    entries, objects = stored(payloads, 6)
    del objects[("faultline-000", "o0")]
    objects[("faultline-000", "o1")] = b"garbage"

    result = verify(MemoryDriver(objects, errors={"o2": "EIO"}), entries, payloads)

    summary = result.as_dict()
    assert (summary["checked"], summary["lost_objects"], summary["corrupt_objects"],
            summary["unreadable_objects"]) == (6, 1, 1, 1)


def test_nothing_to_verify_is_ok():
    result = verify(MemoryDriver({}), [], PayloadSource(seed=1, min_size=1, max_size=1))

    assert result.ok
    assert result.checked == 0


def test_reads_that_never_complete_time_out(payloads):
    class SilentDriver:
        def read(self, container, name, size, done):
            pass

    entries, _ = stored(payloads, 2)

    with pytest.raises(TimeoutError, match=r"^verify: 2 reads still pending after 0 s$"):
        verify(SilentDriver(), entries, payloads, timeout_s=0.1)


def test_the_verifies_of_several_drivers_add_up_and_their_classes_too():
    from loadgen.consistency import Finding, summary
    from loadgen.verify import merged

    def record(findings, operations):
        return {"classes": summary(findings), "operations": operations, "listings": 2,
                "left_out": 0, "listing_delay_s": 1.0}
    one = {"checked": 10, "lost_objects": 1, "corrupt_objects": 0, "unreadable_objects": 1,
           "missing": ["c/a"], "corrupt": [], "unreadable": {"c/b": "timeout"},
           "consistency": record([Finding("stale", ("c", "x"), 0.5, ""),
                                  Finding("stale", ("c", "x"), 2.5, "")], 100)}
    two = {"checked": 5, "lost_objects": 0, "corrupt_objects": 1, "unreadable_objects": 0,
           "missing": [], "corrupt": ["c/d"], "unreadable": {},
           "consistency": record([Finding("stale", ("c", "y"), 1.0, ""),
                                  Finding("resurrected", ("c", "z"), 3.0, "")], 50)}
    out = merged([one, two])
    assert (out["checked"], out["lost_objects"], out["corrupt_objects"],
            out["unreadable_objects"]) == (15, 1, 1, 1)
    assert out["missing"] == ["c/a"] and out["corrupt"] == ["c/d"]
    stale = out["consistency"]["classes"]["stale"]
    assert (stale["count"], stale["objects"], stale["max_since_ack_s"]) == (3, 2, 2.5)
    assert stale["examples"] == ["c/x", "c/y"]
    assert out["consistency"]["classes"]["resurrected"]["objects"] == 1
    assert (out["consistency"]["operations"], out["consistency"]["listings"],
            out["consistency"]["drivers"]) == (150, 4, 2)
    # one driver without a history: the run's classes are not checked
    assert "consistency" not in merged([one, {**two, "consistency": None}])


def test_a_hung_read_of_a_deleted_object_leaves_the_verify_and_its_checker_whole(payloads):
    class HangsOnDeleted(MemoryDriver):
        def read(self, container, name, size, done):
            if (container, name) in self.objects:
                super().read(container, name, size, done)  # the deleted one never answers

        def list(self, container, done):
            names = "\n".join(n for c, n in self.objects if c == container).encode()
            done(True, len(names), None, names)

    entries, objects = stored(payloads, 2)
    history = HistoryLog(payloads)
    for entry in entries:
        key = (entry.container, entry.name)
        history.issued_write(key, 0, entry.size)
        history.wrote(key, 0, 0.0, 0.1, True, None)
    history.issued_write(("faultline-000", "gone"), 0, 32)
    history.wrote(("faultline-000", "gone"), 0, 0.0, 0.1, True, None)
    history.deleted(("faultline-000", "gone"), 0.2, 0.3, True, None)
    result = verify(HangsOnDeleted(objects), entries, payloads, timeout_s=0.5,
                    history=history, listing_delay_s=0.0)
    assert result.ok and result.checked == 2
    assert result.consistency["listings"] == 1
    assert all(c["count"] == 0 for c in result.consistency["classes"].values())


def test_the_listing_waits_the_delay_after_the_last_delete_too(payloads):
    class Lists(MemoryDriver):
        listed_at: list[float] = []

        def list(self, container, done):
            self.listed_at.append(time.monotonic())
            done(True, 0, None, b"")

    history = HistoryLog(payloads)
    key = ("faultline-000", "gone")
    history.issued_write(key, 0, 32)
    history.wrote(key, 0, 0.0, 0.1, True, None)
    deleted = time.monotonic()
    history.deleted(key, deleted - 0.1, deleted, True, None)
    driver = Lists({})
    result = verify(driver, [], payloads, history=history, listing_delay_s=0.5)
    assert driver.listed_at[0] - deleted >= 0.5
    assert result.consistency["classes"]["resurrected"]["count"] == 0
