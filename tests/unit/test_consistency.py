"""The consistency checker's classes, each on a hand-built history (loadgen/consistency.py)."""

import random
from collections import defaultdict

from loadgen.consistency import (
    FAILED,
    OK,
    UNKNOWN,
    UNRECORDED,
    Delete,
    History,
    Listing,
    Read,
    Write,
    _listing_findings,
    check,
    summary,
)

K = ("faultline-000", "obj-1")


def kinds(history: History, **kwargs) -> list[tuple[str, float | None]]:
    return [(f.kind, None if f.since_ack_s is None else round(f.since_ack_s, 3))
            for f in check(history, **kwargs)]


def test_a_clean_history_has_no_finding():
    history = History(
        writes=[Write(K, 1, 0.0, 1.0, OK), Write(K, 2, 2.0, 3.0, OK)],
        reads=[Read(K, 1.5, 1.6, 1), Read(K, 3.5, 3.6, 2), Read(K, 9.0, 9.1, 2, final=True)])
    assert check(history) == []


def test_an_older_version_after_a_newer_one_was_acknowledged_is_stale():
    history = History(writes=[Write(K, 1, 0.0, 1.0, OK), Write(K, 2, 2.0, 3.0, OK)],
                      reads=[Read(K, 5.0, 5.1, 1)])
    assert kinds(history) == [("stale", 2.0)]


def test_a_read_overlapping_the_newer_write_may_see_either_version():
    history = History(writes=[Write(K, 1, 0.0, 1.0, OK), Write(K, 2, 2.0, 3.0, OK)],
                      reads=[Read(K, 2.5, 3.5, 1), Read(K, 2.9, 3.2, 2)])
    assert check(history) == []


def test_overlapping_writes_may_take_effect_in_either_order():
    # version 1's write ended after version 2's began: 1 may well be the last one applied
    history = History(writes=[Write(K, 1, 0.0, 2.5, OK), Write(K, 2, 2.0, 3.0, OK)],
                      reads=[Read(K, 5.0, 5.1, 1)])
    assert check(history) == []


def test_a_version_served_after_its_delete_was_acknowledged_is_resurrected():
    history = History(writes=[Write(K, 1, 0.0, 1.0, OK)], deletes=[Delete(K, 2.0, 2.5, OK)],
                      reads=[Read(K, 4.0, 4.1, 1)])
    assert kinds(history) == [("resurrected", 1.5)]


def test_a_failed_delete_leaves_the_object_readable():
    history = History(writes=[Write(K, 1, 0.0, 1.0, OK)],
                      deletes=[Delete(K, 2.0, 2.5, FAILED)],
                      reads=[Read(K, 4.0, 4.1, 1), Read(K, 9.0, 9.1, 1, final=True)])
    assert check(history) == []


def test_stale_or_resurrected_is_decided_by_the_newest_acknowledgement():
    # written, deleted, written again: the first version after the second write is stale
    history = History(writes=[Write(K, 1, 0.0, 1.0, OK), Write(K, 2, 4.0, 5.0, OK)],
                      deletes=[Delete(K, 2.0, 3.0, OK)],
                      reads=[Read(K, 3.5, 3.6, 1), Read(K, 6.0, 6.1, 1)])
    assert kinds(history) == [("resurrected", 0.5), ("stale", 1.0)]


def test_an_acknowledged_object_missing_at_the_final_read_is_lost():
    history = History(writes=[Write(K, 1, 0.0, 1.0, OK)],
                      reads=[Read(K, 2.0, 2.1, None), Read(K, 10.0, 10.1, None, final=True)])
    # the read during the load is a 404 among the errors, not a class of its own
    assert kinds(history) == [("lost", 9.0)]


def test_an_object_perhaps_deleted_is_not_lost():
    for outcome in (OK, UNKNOWN):
        history = History(writes=[Write(K, 1, 0.0, 1.0, OK)],
                          deletes=[Delete(K, 2.0, 3.0, outcome)],
                          reads=[Read(K, 10.0, 10.1, None, final=True)])
        assert check(history) == [], outcome


def test_a_write_never_acknowledged_is_not_lost():
    for outcome in (FAILED, UNKNOWN):
        history = History(writes=[Write(K, 1, 0.0, 1.0, outcome)],
                          reads=[Read(K, 10.0, 10.1, None, final=True)])
        assert check(history) == [], outcome


def test_a_write_of_unknown_outcome_that_turns_up_is_recovered():
    history = History(writes=[Write(K, 1, 0.0, 30.0, UNKNOWN)],
                      reads=[Read(K, 45.0, 45.1, 1), Read(K, 50.0, 50.1, 1, final=True)])
    assert kinds(history) == [("recovered", 15.0)]


def test_a_version_never_written_is_unexpected():
    history = History(writes=[Write(K, 1, 0.0, 1.0, OK)], reads=[Read(K, 2.0, 2.1, 7)])
    assert kinds(history) == [("unexpected", None)]


def test_a_found_write_of_unknown_outcome_may_have_landed_after_the_newer_acknowledgement():
    # version 1 timed out at 30 s and may have been applied after version 2's 32 s, or
    # after the delete: served later, it is recovered, neither stale nor resurrected
    stale = History(writes=[Write(K, 1, 0.0, 30.0, UNKNOWN), Write(K, 2, 31.0, 32.0, OK)],
                    reads=[Read(K, 40.0, 40.1, 1)])
    assert kinds(stale) == [("recovered", 10.0)]
    resurrected = History(
        writes=[Write(K, 0, 0.0, 1.0, OK), Write(K, 1, 2.0, 32.0, UNKNOWN)],
        deletes=[Delete(K, 33.0, 34.0, OK)], reads=[Read(K, 40.0, 40.1, 1, final=True)])
    assert kinds(resurrected) == [("recovered", 8.0)]


def test_a_version_whose_write_the_store_refused_is_unexpected():
    history = History(writes=[Write(K, 0, 0.0, 1.0, OK), Write(K, 1, 2.0, 3.0, FAILED)],
                      reads=[Read(K, 5.0, 5.1, 1), Read(K, 9.0, 9.1, 1, final=True)])
    assert kinds(history) == [("unexpected", 2.0), ("unexpected", 6.0)]


def test_an_unrecorded_write_is_of_unknown_effect_and_not_recovered():
    history = History(writes=[Write(K, 0, 0.0, 1.0, OK),
                              Write(K, 1, float("-inf"), float("inf"), UNRECORDED)],
                      reads=[Read(K, 5.0, 5.1, 1), Read(K, 6.0, 6.1, 0)])
    assert check(history) == []


def test_a_read_during_the_unknown_write_that_finds_it_is_recovered_at_once():
    history = History(writes=[Write(K, 1, 0.0, 30.0, UNKNOWN)], reads=[Read(K, 10.0, 10.1, 1)])
    assert kinds(history) == [("recovered", 0.0)]


def test_a_listing_after_the_delay_must_show_what_was_acknowledged():
    other = ("faultline-000", "obj-2")
    history = History(
        writes=[Write(K, 1, 0.0, 1.0, OK), Write(other, 1, 0.0, 1.0, OK)],
        listings=[Listing("faultline-000", 1.5, 1.6, frozenset()),  # within the delay
                  Listing("faultline-000", 4.0, 4.2, frozenset({"obj-2"}))])
    assert kinds(history, listing_delay_s=2.0) == [("listing_gap", 3.0)]


def test_a_listing_racing_a_write_or_a_delete_says_nothing():
    history = History(writes=[Write(K, 1, 0.0, 1.0, OK)], deletes=[Delete(K, 4.0, 5.0, OK)],
                      listings=[Listing("faultline-000", 4.5, 4.6, frozenset({"obj-1"})),
                                Listing("faultline-000", 4.5, 4.6, frozenset())])
    assert check(history) == []


def test_a_listing_after_an_acknowledged_delete_that_shows_the_object_is_resurrected():
    history = History(writes=[Write(K, 1, 0.0, 1.0, OK)], deletes=[Delete(K, 2.0, 3.0, OK)],
                      listings=[Listing("faultline-000", 8.0, 8.5, frozenset({"obj-1"})),
                                Listing("faultline-001", 8.0, 8.5, frozenset({"obj-1"}))])
    assert kinds(history) == [("resurrected", 5.0)]


def test_a_deleted_object_still_listed_within_the_delay_is_not_resurrected():
    # Swift updates a container's listing after the DELETE's answer: it lags, as for a PUT
    history = History(writes=[Write(K, 1, 0.0, 1.0, OK)], deletes=[Delete(K, 2.0, 3.0, OK)],
                      listings=[Listing("faultline-000", 3.01, 3.1, frozenset({"obj-1"})),
                                Listing("faultline-000", 5.0, 5.1, frozenset({"obj-1"}))])
    assert kinds(history, listing_delay_s=1.0) == [("resurrected", 2.0)]


def test_a_delete_of_unknown_outcome_may_land_after_the_listing_began():
    # the delete timed out before the listing; it may still have been applied during it
    history = History(writes=[Write(K, 1, 0.0, 1.0, OK)],
                      deletes=[Delete(K, 2.0, 3.0, UNKNOWN)],
                      listings=[Listing("faultline-000", 8.0, 8.5, frozenset())],
                      reads=[Read(K, 9.0, 9.1, None, final=True)])
    assert check(history, listing_delay_s=1.0) == []


def test_the_summary_counts_each_class_with_its_longest_delay_and_examples():
    keys = [("faultline-000", f"obj-{i}") for i in range(8)]
    history = History(writes=[Write(k, 1, 0.0, 1.0, OK) for k in keys],
                      reads=[Read(k, 10.0 + i, 10.1 + i, None, final=True)
                             for i, k in enumerate(keys)])
    out = summary(check(history))
    assert out["lost"]["count"] == 8 and out["lost"]["max_since_ack_s"] == 16.0
    assert out["lost"]["examples"] == [f"faultline-000/obj-{i}" for i in range(5)]
    assert out["lost"]["objects"] == 8
    assert out["stale"] == {"count": 0, "objects": 0, "max_since_ack_s": None, "examples": []}


def test_an_object_found_twice_is_two_observations_and_one_object():
    history = History(writes=[Write(K, 1, 0.0, 1.0, OK)], deletes=[Delete(K, 2.0, 3.0, OK)],
                      reads=[Read(K, 5.0, 5.1, 1), Read(K, 6.0, 6.1, 1, final=True)],
                      listings=[Listing("faultline-000", 8.0, 8.5, frozenset({"obj-1"}))])
    out = summary(check(history))
    assert out["resurrected"]["count"] == 3 and out["resurrected"]["objects"] == 1


def test_listings_check_only_listed_and_live_keys_and_find_what_checking_all_would():
    # random histories of writes, overwrites, deletes and listings, some overlapping and
    # some of unknown or failed outcome: the sweep's findings are those of every key
    rng = random.Random(7)
    outcomes = (OK, OK, OK, FAILED, UNKNOWN)
    for _ in range(200):
        history, clock = History(), 0.0
        for n in range(12):
            key, at = ("faultline-000", f"obj-{n}"), rng.uniform(0, 5)
            for version in range(rng.randint(1, 3)):
                took = rng.uniform(0.01, 2)
                history.writes.append(Write(key, version, at, at + took, rng.choice(outcomes)))
                at += rng.uniform(0, 2)
            if rng.random() < 0.5:
                history.deletes.append(Delete(key, at, at + rng.uniform(0.01, 1),
                                              rng.choice(outcomes)))
        for _ in range(6):
            clock = rng.uniform(0, 12)
            names = frozenset(f"obj-{n}" for n in range(12) if rng.random() < 0.5)
            history.listings.append(Listing("faultline-000", clock,
                                            clock + rng.uniform(0.01, 1), names))
        writes, deletes = defaultdict(list), defaultdict(list)
        for write in history.writes:
            writes[write.key].append(write)
        for delete in history.deletes:
            deletes[delete.key].append(delete)
        everything = {w.key for w in history.writes}
        expected = [f for listing in sorted(history.listings, key=lambda lst: lst.start)
                    for f in _listing_findings(listing, everything, writes, deletes, 0.5)]
        found = [f for f in check(history, listing_delay_s=0.5)
                 if f.kind in ("listing_gap", "resurrected")]
        assert found == expected


def test_a_listed_object_never_written_is_unexpected_when_the_listings_are_the_load_s_own():
    history = History(writes=[Write(K, 1, 0.0, 1.0, OK)],
                      deletes=[Delete(("faultline-000", "obj-3"), 1.0, 2.0, UNKNOWN)],
                      listings=[Listing("faultline-000", 5.0, 5.1,
                                        frozenset({"obj-1", "obj-2", "obj-3"})),
                                Listing("faultline-000", 6.0, 6.1,
                                        frozenset({"obj-1", "obj-2"}))])  # one object
    assert kinds(history, listing_delay_s=1.0, listed_are_ours=True) == [("unexpected", None)]
    assert check(history, listing_delay_s=1.0) == []  # others' objects may be listed too
