"""Bounds on every input (issue 25, "Unbounded input"): each workload field has a maximum,
an object whose buffers would not fit in memory is refused with the reason, a comparison
takes at most MAX_COMPARED_RUNS runs, and a JSON body's depth is measured without recursion.
Each row is (input, the exact message)."""

import pytest

from loadgen.exceptions import WorkloadError
from loadgen.machine import memory_bytes
from loadgen.workload import parse_workload
from service.results.comparison import MAX_COMPARED_RUNS, compare, parse_run_ids
from service.results.exceptions import CompareError
from service.web.api.params import depth_of

GIB = 1024 ** 3
MEMORY = 16 * GIB  # a machine of 16 GiB, so the messages do not depend on this one


@pytest.mark.parametrize("raw, message", [
    ({"object_size": 100_000_000_000},
     "object_size must be <= 5,368,709,120, not 100,000,000,000"),
    ({"object_size": 1e11}, "object_size must be a whole number, not 100000000000.0"),
    ({"object_size_max": 6 * GIB}, "object_size_max must be <= 5,368,709,120, not 6,442,450,944"),
    ({"containers": 10_001}, "containers must be <= 10,000, not 10,001"),
    ({"objects_per_container": 10 ** 9},
     "objects_per_container must be <= 1,000,000, not 1,000,000,000"),
    ({"rate": 1e12}, "rate must be <= 100,000, not 1,000,000,000,000.0"),
    ({"workers": 5000, "max_in_flight": 5000},
     "workers must be <= 4,096, not 5,000; max_in_flight must be <= 4,096, not 5,000"),
    ({"ramp_s": 86400}, "ramp_s must be <= 3,600, not 86,400"),
    ({"baseline_s": 1e9}, "baseline_s must be <= 3,600, not 1,000,000,000.0"),
    ({"duration_s": 10 ** 8}, "duration_s must be <= 604,800, not 100,000,000"),
    ({"seed": 2 ** 64}, "seed must be <= 4,294,967,295, not 18,446,744,073,709,551,616"),
    ({"drivers": 65}, "drivers must be <= 64, not 65"),
    ({"object_size": 64 * 1024 ** 2},
     "objects of 64.0 MiB with 1024 in flight need 128.1 GiB of buffers, more than half of "
     "this machine's memory (8.0 GiB of 16.0 GiB): make the objects smaller or lower "
     "max_in_flight"),
    ({"object_size": 1024, "object_size_max": 5 * GIB, "workers": 2},
     "objects of 5.0 GiB with 2 in flight need 30.0 GiB of buffers, more than half of this "
     "machine's memory (8.0 GiB of 16.0 GiB): make the objects smaller or lower workers"),
])
def test_every_workload_field_has_a_maximum_the_machine_can_hold(raw, message):
    with pytest.raises(WorkloadError) as refused:
        parse_workload(raw, memory=MEMORY)
    assert str(refused.value) == f"invalid workload: {message}"


@pytest.mark.parametrize("raw", [
    {"object_size": 4 * 1024 ** 2, "max_in_flight": 512},  # 4 GiB of buffers
    {"object_size": GIB, "workers": 2},  # 6 GiB
    {"rate": 100_000, "containers": 10_000, "duration_s": 604_800},
])
def test_a_workload_within_its_bounds_and_the_memory_is_accepted(raw):
    assert parse_workload(raw, memory=MEMORY).as_dict()["object_size"] == raw.get(
        "object_size", 4096)


def test_the_machine_memory_is_read_from_meminfo(tmp_path):
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       24683656 kB\nMemFree:         1000 kB\n")
    assert memory_bytes(meminfo) == 24683656 * 1024
    assert memory_bytes(tmp_path / "absent") is None


@pytest.mark.parametrize("values, message", [
    ([",".join(str(i) for i in range(1, MAX_COMPARED_RUNS + 2))],
     f"a comparison takes at most {MAX_COMPARED_RUNS} runs"),
    (["1"] * (MAX_COMPARED_RUNS + 1), f"a comparison takes at most {MAX_COMPARED_RUNS} runs"),
    (["1,x"], "'x' is not a run id"),
])
def test_a_comparison_takes_a_bounded_number_of_runs(values, message):
    with pytest.raises(CompareError) as refused:
        parse_run_ids(values)
    assert str(refused.value) == message


def test_a_comparison_of_too_many_runs_is_refused_before_the_database():
    with pytest.raises(CompareError, match=f"at most {MAX_COMPARED_RUNS} runs"):
        compare(None, list(range(1, MAX_COMPARED_RUNS + 2)))  # no session is touched


@pytest.mark.parametrize("value, depth", [
    (1, 0), ({}, 1), ({"a": [1, {"b": []}]}, 4), ([[[[]]]], 4),
])
def test_json_depth_is_measured(value, depth):
    assert depth_of(value) == depth


def test_json_depth_of_ten_thousand_levels_is_measured_without_recursion():
    value: list = []
    for _ in range(10_000):
        value = [value]
    assert depth_of(value) == 10_001
