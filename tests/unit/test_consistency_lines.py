"""The report's consistency lines and the comparison's figures, from a stored verify."""

from loadgen.consistency import CLASSES, Finding, summary
from service.results.consistency import consistency_figures, consistency_lines


def _verify(findings, operations=120, left_out=0, listings=2):
    return {"checked": 10, "consistency": {"classes": summary(findings),
                                           "operations": operations, "left_out": left_out,
                                           "listings": listings, "listing_delay_s": 1.0}}


def test_every_class_is_counted_and_each_found_one_gets_its_time_and_examples():
    verify = _verify([Finding("stale", ("c", "a"), 1.25, ""),
                      Finding("stale", ("c", "b"), 0.5, ""),
                      Finding("recovered", ("c", "d"), 3.0, "")])
    lines = consistency_lines(verify)
    assert lines[0] == ("  consistency                  lost 0, stale reads 2, resurrected 0, "
                        "listing gaps 0, recovered 1, unexpected 0; over 120 operations (2 of "
                        "them listings)")
    assert lines[1] == ("    stale reads: 2, up to 1.250 s after a newer version was "
                        "acknowledged; e.g. c/a, c/b")
    assert lines[2].startswith("    recovered: 1, up to 3.000 s")
    assert consistency_figures(verify) == {
        "consistency_lost": 0, "consistency_stale": 2, "consistency_resurrected": 0,
        "consistency_listing_gap": 0, "consistency_recovered": 1,
        "consistency_unexpected": 0}
    assert set(CLASSES) == {k.removeprefix("consistency_") for k in consistency_figures(verify)}


def test_a_bounded_history_says_so_and_a_run_without_one_is_not_checked():
    assert "(5 more were not recorded: the history is bounded)" in \
        consistency_lines(_verify([], left_out=5))[0]
    assert consistency_lines({"checked": 3}) == [
        "  consistency                  n/a: not checked for this run"]
    assert consistency_lines(None)[0].endswith("n/a: not checked for this run")
    assert set(consistency_figures(None).values()) == {None}


def test_listing_gaps_are_not_checked_without_a_listing_and_objects_count_once():
    verify = _verify([Finding("resurrected", ("c", "a"), 1.0, ""),
                      Finding("resurrected", ("c", "a"), 2.0, ""),
                      Finding("stale", ("c", "b"), 0.5, ""),
                      Finding("stale", ("c", "b"), 0.7, "")], listings=0)
    figures = consistency_figures(verify)
    assert figures["consistency_listing_gap"] is None
    assert figures["consistency_resurrected"] == 1 and figures["consistency_stale"] == 2
    assert "listing gaps n/a" in consistency_lines(verify)[0]
