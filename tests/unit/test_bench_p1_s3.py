"""bench/p1_s3 judges the S3 driver by its pairs' ratios against boto3, and its own CPU per
operation by the high end of its pairs' interval."""

from bench.p1_s3 import rows_of


def found(ours, theirs, our_cpu, their_cpu):
    return {"faultline": {"write": ours, "read": ours, "write_cpu_ms": our_cpu,
                          "read_cpu_ms": our_cpu},
            "boto3_threads": {"write": theirs, "read": theirs, "write_cpu_ms": their_cpu,
                              "read_cpu_ms": their_cpu},
            "pair": {"idle_wait_s": [0.0] * len(ours)}}


def test_the_low_end_of_the_ratio_and_the_high_end_of_the_cpu_decide():
    rows = rows_of(found([100, 96, 98, 120, 99], [100] * 5, [0.1, 0.2, 0.15, 0.12, 0.11],
                         [0.5] * 5), "swift", 5, 10.0, "only the Swift lab up", (1.0, 2.0))
    write, write_cpu = rows[0], rows[1]
    assert write.id == "P1-s3-swift" and "Swift's s3api" in write.what
    assert write.detail["ratio_low"] == 0.96 and write.met is True
    assert write_cpu.unit == "ms" and write_cpu.met is True  # 0.2 ms at the high end

    rows = rows_of(found([100, 90, 98, 120, 99], [100] * 5, [0.1, 0.35, 0.15, 0.12, 0.11],
                         [0.5] * 5), "ceph", 5, 10.0, "x", (1.0, 2.0))
    assert rows[0].met is False and "0.900x" in rows[0].gap and "RGW" in rows[0].what
    assert rows[1].met is False and "0.350 ms" in rows[1].gap


def test_too_few_pairs_give_no_verdict():
    rows = rows_of(found([100, 99], [100, 100], [0.1, 0.1], [0.1, 0.1]), "ceph", 2, 10.0,
                   "x", (1.0, 2.0))
    assert [row.met for row in rows] == [None] * 4
    assert "2 pairs: at least 5" in rows[0].gap


def test_the_aa_check_gives_the_method_s_spread_and_judges_nothing():
    from bench.pairs import aa_rows

    found = {"boto3_threads": {"write": [100, 104, 98, 101, 97], "read": [50] * 5},
             "boto3_again": {"write": [100, 100, 100, 100, 100], "read": [50] * 5},
             "pair": {"idle_wait_s": [0.0] * 5}}
    write, read = aa_rows(found, "boto3_threads", "boto3_again", "P1-s3-ceph-aa",
                          "A/A: boto3 against itself, 4 KiB {op}, x", "boto3", 5, 10.0, 0.9)
    assert write.id == "P1-s3-ceph-aa" and "4 KiB write" in write.what
    assert (write.detail["ratio_low"], write.detail["ratio_median"],
            write.detail["ratio_high"]) == (0.97, 1.0, 1.04)
    assert write.met is None and read.met is None and "4 KiB read" in read.what
    assert read.detail["pair_ratios"] == [1.0] * 5
