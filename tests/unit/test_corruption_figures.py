"""A corruption's figures and report lines (service/results/corruption.py), from the outputs
its actions recorded."""

from __future__ import annotations

from types import SimpleNamespace

from service.results.corruption import corruption_figures, corruption_lines

INJECTED = {"corrupted": "16 bytes flipped at offset 5461 of faultline-canary-1 (16384 B) on "
                         "its replica osd.2 (PG 2.b)", "replica": "osd.2",
            "md5_corrupted": "0" * 32}
WATCHED = {"mode": "triggered", "asked": ["ceph pg deep-scrub 2.b", "ceph pg repair 2.b"],
           "detected_after_s": 3.2,
           "detected_by": "a deep scrub of PG 2.b (inconsistent; list-inconsistent-obj: osd.2: "
                          "data_digest_mismatch_info)",
           "repaired_after_s": 9.8, "repaired_by": "pg repair (PG 2.b active+clean, not "
                                                   "inconsistent)",
           "confirmed": "a deep scrub after the repair found PG 2.b clean (4.1 s)",
           "reads": 24, "corrupt_reads": 0, "corrupt_reads_flagged": 0, "unreadable_reads": 0,
           "first_corrupt_read_s": None, "reasons": {}}


def _run(*outputs, verify=None):
    kinds = ["fault_injected"] + ["activity"] * (len(outputs) - 1)
    return SimpleNamespace(verify=verify, events=[
        SimpleNamespace(kind=k, detail={"output": o}) for k, o in zip(kinds, outputs, strict=True)])


def test_a_repaired_corruption_says_when_and_by_what_and_that_no_client_read_it():
    figures = corruption_figures(_run(INJECTED, WATCHED, verify={"corrupt_objects": 0}))

    assert figures["detected_after_s"] == 3.2 and figures["corrupt_reads"] == 0
    assert corruption_lines(figures) == [
        "corrupted: 16 bytes flipped at offset 5461 of faultline-canary-1 (16384 B) on its "
        "replica osd.2 (PG 2.b)",
        "detected after 3.2 s by a deep scrub of PG 2.b (inconsistent; list-inconsistent-obj: "
        "osd.2: data_digest_mismatch_info) (asked: ceph pg deep-scrub 2.b, ceph pg repair 2.b)",
        "repaired after 9.8 s by pg repair (PG 2.b active+clean, not inconsistent); a deep "
        "scrub after the repair found PG 2.b clean (4.1 s)",
        "corrupt reads seen by clients: 0 of 24 reads of the object",
        "verify phase: 0 corrupt objects of the load's own",
    ]


def test_a_corrupt_read_given_away_by_its_etag_is_counted_and_said():
    watched = {**WATCHED, "corrupt_reads": 1, "corrupt_reads_flagged": 1,
               "first_corrupt_read_s": 0.5}

    line = corruption_lines(corruption_figures(_run(INJECTED, watched)))[3]

    assert line == ("corrupt reads seen by clients: 1 of 24 reads of the object, the first "
                    "after 0.5 s, 1 of them with an ETag that did not match the body (a client "
                    "that checks it would refuse them)")


def test_an_undetected_corruption_gives_the_reason_instead_of_a_time():
    watched = {**WATCHED, "mode": "scheduled", "asked": [], "detected_after_s": None,
               "detected_by": None, "repaired_after_s": None, "repaired_by": None,
               "confirmed": None, "reasons": {
                   "detected_after_s": "a deep scrub did not report it within 60 s (left to "
                                       "the schedule)",
                   "repaired_after_s": "not detected, so not repaired"}}

    lines = corruption_lines(corruption_figures(_run(INJECTED, watched)))

    assert lines[1:3] == ["not detected: a deep scrub did not report it within 60 s (left to "
                          "the schedule)", "not repaired: not detected, so not repaired"]
    assert lines[-1] == "verify phase: n/a"


def test_a_run_that_corrupted_nothing_has_no_corruption_figures():
    assert corruption_figures(_run({"osd_id": 1, "pid": 4242})) is None
    assert corruption_lines(None) == []
