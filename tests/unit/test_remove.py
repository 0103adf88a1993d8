"""The remove pass: each acknowledged object deleted; one already gone is not a failure."""

import threading

import pytest

from loadgen.ledger import Entry
from loadgen.remove import remove


class MemoryStore:
    """Deletes from a dict; answers from another thread like a real driver."""

    def __init__(self, names, errors=None):
        self.objects = set(names)
        self.errors = errors or {}

    def delete(self, container, name, done):
        def finish():
            if name in self.errors:
                done(False, 0, self.errors[name], None)
            elif (container, name) in self.objects:
                self.objects.discard((container, name))
                done(True, 0, None, None)
            else:
                done(False, 0, "404", None)
        threading.Thread(target=finish).start()


def entries(n):
    return [Entry("faultline-001", f"o{i}", 10) for i in range(n)]


def test_every_object_is_deleted_and_a_second_pass_finds_them_all_gone():
    store = MemoryStore((e.container, e.name) for e in entries(40))

    first = remove(store, entries(40), concurrency=4)
    second = remove(store, entries(40), concurrency=4)

    assert (first.deleted, first.already_gone, first.ok) == (40, 0, True)
    assert not store.objects
    assert (second.deleted, second.already_gone, second.ok) == (0, 40, True)


def test_a_delete_the_cluster_refuses_is_a_failure_named_by_its_object():
    store = MemoryStore([("faultline-001", "o0")], errors={"o1": "EIO"})

    result = remove(store, entries(3))

    assert not result.ok
    assert result.as_dict() == {"deleted": 1, "already_gone": 1, "failed": 1,
                                "failures": {"faultline-001/o1": "EIO"}}


def test_deletes_that_never_answer_time_out():
    class Silent:
        def delete(self, container, name, done):
            pass

    with pytest.raises(TimeoutError, match=r"^remove: 3 deletes still pending after 0 s$"):
        remove(Silent(), entries(3), timeout_s=0.1)
