"""The integrity ledger: acknowledged writes, O(1) random picks, deletes leave it."""

from loadgen.ledger import Entry, Ledger


def filled(n, seed=1):
    ledger = Ledger(seed=seed)
    for i in range(n):
        ledger.add("c", f"o{i}", i)
    return ledger


def test_added_entries_are_listed_in_order():
    ledger = filled(3)

    assert len(ledger) == 3
    assert ledger.entries() == [Entry("c", "o0", 0), Entry("c", "o1", 1), Entry("c", "o2", 2)]


def test_adding_the_same_object_again_replaces_its_size():
    ledger = filled(2)

    ledger.add("c", "o0", 999)

    assert len(ledger) == 2
    assert ledger.entries()[0] == Entry("c", "o0", 999)


def test_the_same_name_in_another_container_is_another_object():
    ledger = Ledger()
    ledger.add("a", "o", 1)
    ledger.add("b", "o", 1)

    assert len(ledger) == 2


def test_pick_and_take_on_an_empty_ledger_return_none():
    ledger = Ledger()

    assert ledger.pick() is None
    assert ledger.take() is None


def test_pick_leaves_the_entry_in_the_ledger():
    ledger = filled(5)

    entry = ledger.pick()

    assert entry in ledger.entries()
    assert len(ledger) == 5


def test_take_removes_the_entry_it_returns():
    ledger = filled(5)

    entry = ledger.take()

    assert entry not in ledger.entries()
    assert len(ledger) == 4


def test_taking_everything_returns_each_entry_exactly_once():
    ledger = filled(200)
    expected = set(ledger.entries())

    taken = [ledger.take() for _ in range(200)]

    assert len(set(taken)) == 200
    assert set(taken) == expected
    assert len(ledger) == 0
    assert ledger.take() is None


def test_an_object_taken_and_written_again_is_back_once():
    ledger = filled(50)
    for _ in range(25):
        entry = ledger.take()
        ledger.add(entry.container, entry.name, entry.size)

    assert sorted(e.name for e in ledger.entries()) == sorted(f"o{i}" for i in range(50))


def test_picks_are_reproducible_with_the_same_seed():
    a, b = filled(100, seed=3), filled(100, seed=3)

    assert [a.pick() for _ in range(50)] == [b.pick() for _ in range(50)]


def test_entries_returns_a_copy():
    ledger = filled(2)

    ledger.entries().clear()

    assert len(ledger) == 2


def test_an_object_being_read_is_not_given_to_a_delete_until_its_read_is_done():
    # a delete issued after a read may reach the cluster first: the read's 404 would be
    # the workload's own race (two P8 baselines on the Swift lab failed on it)
    ledger = filled(1)
    entry = ledger.pick()
    assert ledger.take() is None and len(ledger) == 1
    ledger.pick()  # a second read of the same object
    ledger.done_reading(entry.container, entry.name)
    assert ledger.take() is None  # one read still in flight
    ledger.done_reading(entry.container, entry.name)
    assert ledger.take() == entry and len(ledger) == 0


def test_a_delete_takes_an_object_no_read_holds():
    ledger = filled(3)
    read = ledger.pick()
    taken = {ledger.take(), ledger.take()}
    assert read not in taken and len(ledger) == 1 and ledger.take() is None
