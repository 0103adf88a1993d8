"""bench/p1_swift judges each reference by its pairs' ratios, as P1-ceph does."""

from types import SimpleNamespace

from bench.p1_swift import _rows

ARGS = SimpleNamespace(seconds=10.0)


def figures(ours, keepalive, swift_bench):
    return {"faultline": {"write": ours, "read": ours},
            "keepalive": {"write": keepalive, "read": keepalive},
            "swift_bench": {"write": swift_bench, "read": swift_bench}}


def test_the_low_end_of_the_pairs_interval_decides():
    rows = _rows(figures([100, 96, 98, 120, 99], [100] * 5, [20] * 5), ARGS, [],
                 "only the Swift lab up", (1.0, 2.0))
    against_faster, against_bench = rows[0], rows[1]
    assert against_faster.reference_name == "keep-alive client"
    assert against_faster.detail["ratio_low"] == 0.96 and against_faster.met is True
    assert against_bench.detail["ratio_median"] == 99 / 20 and against_bench.met is True
    assert "only the Swift lab up" in against_faster.what

    rows = _rows(figures([100, 90, 98, 120, 99], [100] * 5, [30] * 5), ARGS, [], "x",
                 (1.0, 2.0))
    assert rows[0].met is False and "0.900x" in rows[0].gap
    assert rows[1].met is False  # 3.3x swift-bench, under 4x


def test_a_pair_the_reference_missed_is_left_out_and_too_few_pairs_give_no_verdict():
    rows = _rows(figures([100, 96, 98, 120, 99], [100] * 5, [20, None, 20, 20, 20]), ARGS,
                 [], "x", (1.0, 2.0))
    bench = rows[1]
    assert bench.detail["pair_ratios"] == [5.0, 4.9, 6.0, 4.95]  # the pair without it left out
    assert bench.met is None and "4 pairs" in bench.gap
