"""bench/p8_baseline's overload: twice the highest knee stage, as a share of the knee."""

from bench.p8_baseline import share_of


def test_twice_the_highest_knee_stage_as_a_share_of_the_knee():
    share, info = share_of({"capacity_ops": 17.6, "capacity_range": [14.1, 35.6],
                            "calibration_id": 9})
    assert share == "405%" and info["calibration_id"] == 9 and info["capped"] is None


def test_one_stage_is_twice_the_knee_and_the_cap_holds():
    assert share_of({"capacity_ops": 100.0})[0] == "200%"
    share, info = share_of({"capacity_ops": 10.0, "capacity_range": [5.0, 40.0]})
    assert share == "500%" and info["capped"] == "800% asked, the workload's cap is 500%"


def test_without_a_resolved_rate_it_says_so():
    share, info = share_of({})
    assert share == "200%" and info["from"] == "no run resolved a relative rate"
