"""parse_workload: one validated Workload from a plain dict, every problem in one message."""

import pytest

from loadgen.exceptions import WorkloadError
from loadgen.workload import Workload, parse_workload


def test_empty_workload_gets_the_documented_defaults():
    workload = parse_workload({})

    assert workload == Workload()
    assert workload.rate == 100.0
    assert workload.mix == {"read": 80, "write": 15, "delete": 5}
    assert workload.object_size == 4096
    assert workload.max_in_flight == 1024
    assert workload.workers is None
    assert workload.duration_s is None


def test_none_is_the_same_as_an_empty_workload():
    assert parse_workload(None) == Workload()


def test_given_values_override_defaults():
    workload = parse_workload({"rate": 250, "mix": {"write": 100}, "object_size": 1024,
                               "object_size_max": 8192, "seed": 7})

    assert workload.rate == 250
    assert workload.mix == {"write": 100}
    assert workload.size_range() == (1024, 8192)
    assert workload.seed == 7


def test_size_range_of_a_fixed_size_is_that_size_twice():
    assert parse_workload({"object_size": 512}).size_range() == (512, 512)


def test_as_dict_round_trips_through_parse_workload():
    workload = parse_workload({"rate": 42.5, "containers": 3})

    assert parse_workload(workload.as_dict()) == workload


@pytest.mark.parametrize(("raw", "message"), [
    ({"rate": -5}, "invalid workload: rate must be > 0, not -5"),
    ({"rate": 0}, "invalid workload: rate must be > 0, not 0"),
    ({"rate": "fast"}, "invalid workload: rate must be ops/s or a share of the calibrated "
                       "capacity from 0% to 500% (e.g. \"50%\"), not 'fast'"),
    ({"rate": True}, "invalid workload: rate must be a number, not True"),
    ({"mix": {"read": 50, "write": 20}}, "invalid workload: mix must sum to 100, not 70"),
    ({"mix": {}}, "invalid workload: mix must sum to 100, not 0"),
    ({"mix": {"read": 80, "write": 15, "remove": 5}},
     "invalid workload: mix has unknown operations remove (known: read, write, delete, "
     "overwrite, list, head)"),
    ({"mix": {"read": "80", "write": 20}},
     "invalid workload: mix percentages must be numbers >= 0"),
    ({"mix": {"read": 110, "write": -10}},
     "invalid workload: mix percentages must be numbers >= 0"),
    ({"mix": ["read"]},
     "invalid workload: mix must be a mapping of read, write, delete, overwrite, list, "
     "head to percentages"),
    ({"mix": {"read": 100}, "objects_per_container": 0},
     "invalid workload: a mix that reads, overwrites, deletes or heads objects needs "
     "objects: set objects_per_container or a write share"),
    ({"mix": {"head": 50, "list": 50}, "objects_per_container": 0},
     "invalid workload: a mix that reads, overwrites, deletes or heads objects needs "
     "objects: set objects_per_container or a write share"),
    ({"object_size": 0}, "invalid workload: object_size must be > 0, not 0"),
    ({"object_size": 100, "object_size_max": 50},
     "invalid workload: object_size_max must be >= 100, not 50"),
    ({"containers": 0}, "invalid workload: containers must be >= 1, not 0"),
    ({"workers": 0}, "invalid workload: workers must be >= 1, not 0"),
    ({"workers": 32, "max_in_flight": 16},
     "invalid workload: workers (32) cannot exceed max_in_flight (16)"),
    ({"containers": 2.5}, "invalid workload: containers must be a whole number, not 2.5"),
    ({"object_size": 4096.5}, "invalid workload: object_size must be a whole number, not 4096.5"),
    ({"seed": "x"}, "invalid workload: seed must be a number, not 'x'"),
    ({"prefill": "no"}, "invalid workload: prefill must be true or false, not 'no'"),
    ({"baseline_s": 0}, "invalid workload: baseline_s must be > 0, not 0"),
    ({"ramp_s": -1}, "invalid workload: ramp_s must be >= 0, not -1"),
    ({"duration_s": 0}, "invalid workload: duration_s must be > 0, not 0"),
    ({"max_in_flight": 0}, "invalid workload: max_in_flight must be >= 1, not 0"),
    ({"colour": "red"}, "invalid workload: unknown key 'colour'"),
], ids=lambda v: v if isinstance(v, str) else None)
def test_invalid_workload_is_rejected_with_exact_message(raw, message):
    with pytest.raises(WorkloadError) as excinfo:
        parse_workload(raw)

    assert str(excinfo.value) == message


def test_several_problems_are_reported_in_one_message():
    with pytest.raises(WorkloadError) as excinfo:
        parse_workload({"rate": 0, "object_size": 0, "mix": {"read": 1},
                        "colour": "red", "shape": "round"})

    assert str(excinfo.value) == (
        "invalid workload: unknown key 'colour'; unknown key 'shape'; "
        "object_size must be > 0, not 0; rate must be > 0, not 0; mix must sum to 100, not 1")


def test_a_non_numeric_object_size_with_a_max_is_reported_not_crashed_on():
    # Regression: object_size_max was compared with a non-number (TypeError).
    with pytest.raises(WorkloadError) as excinfo:
        parse_workload({"object_size": "big", "object_size_max": 8192})

    assert str(excinfo.value) == "invalid workload: object_size must be a number, not 'big'"


def test_an_unknown_key_is_reported_even_when_everything_else_is_valid():
    with pytest.raises(WorkloadError, match=r"^invalid workload: unknown key 'rte'$"):
        parse_workload({"rte": 10, "rate": 10})


def test_a_share_of_several_drivers_sums_to_the_whole_workload():
    workload = parse_workload({"rate": 300, "drivers": 3, "objects_per_container": 100})
    share = workload.share()
    assert share.rate * 3 == 300
    assert share.drivers == 1
    assert share.objects_per_container * 3 >= 100
    assert share.seed == workload.seed  # the payloads: any driver can verify any object


def test_the_drivers_must_make_sense():
    with pytest.raises(WorkloadError, match="drivers must be >= 1, not 0"):
        parse_workload({"drivers": 0})
    with pytest.raises(WorkloadError, match="drivers must be <= 64, not 65"):
        parse_workload({"drivers": 65})


@pytest.mark.parametrize("rate, share", [("50%", 0.5), (" 7.5 % ", 0.075), ("200%", 2.0),
                                         ("500%", 5.0), (120, None), (0.5, None)])
def test_a_rate_is_ops_per_second_or_a_share_of_the_capacity(rate, share):
    assert parse_workload({"rate": rate}).capacity_share == share


@pytest.mark.parametrize("rate", ["0%", "-5%", "501%", "50", "half", "50%%", "nan%", "%"])
def test_a_share_of_the_capacity_must_be_a_percentage_above_0_up_to_500(rate):
    with pytest.raises(WorkloadError, match="rate must be ops/s or a share of the calibrated "
                                            r"capacity from 0% to 500% \(e.g. \"50%\"\)"):
        parse_workload({"rate": rate})
