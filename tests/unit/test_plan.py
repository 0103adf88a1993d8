"""The control's arguments as one frozen plan (service.experiments.plan), checked completely
without a cluster: what the control reads comes from here, at enqueue, upload and run."""

from __future__ import annotations

import dataclasses

import pytest

from service.experiments.exceptions import PreflightError
from service.experiments.plan import DEFAULT_TAIL_S, plan_of
from service.results.exceptions import InvalidCalibration

EXPERIMENT = {
    "method": [{"type": "action", "name": "kill-osd"}, {"type": "probe", "name": "wait"},
               {"type": "action", "name": "start-osd"}],
    "rollbacks": [{"type": "action", "name": "start-osd-again"}],
}
WORKLOAD = {"rate": 20, "ramp_s": 2, "baseline_s": 10}


def test_a_plan_holds_every_argument_parsed_and_is_frozen():
    plan = plan_of(EXPERIMENT, {"workload": WORKLOAD, "fault": "kill-osd",
                                "restore": "start-osd-again", "tail_s": 5,
                                "baseline": {"on_invalid": "inject-anyway"},
                                "abort_on": [{"alertname": "CephHealthError"}], "api": "swift"})
    assert plan.workload.rate == 20 and plan.fault == "kill-osd"
    assert plan.restore == "start-osd-again"  # a rollback may be the restore
    assert (plan.tail_s, plan.on_invalid, plan.api) == (5.0, "inject-anyway", "swift")
    assert len(plan.abort_on) == 1 and plan.capacity is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.tail_s = 1  # type: ignore[misc]
    assert plan.for_api("rados").api == "rados" and plan.api == "swift"


def test_defaults_are_the_controls():
    plan = plan_of(EXPERIMENT, {"workload": WORKLOAD})
    assert (plan.fault, plan.restore, plan.baseline_after, plan.api) == (None,) * 4
    assert plan.tail_s == DEFAULT_TAIL_S and plan.on_invalid == "stop"


@pytest.mark.parametrize(("arguments", "message"), [
    ({"fault": "kill-osd2"}, "invalid fault 'kill-osd2': not the name of an activity of the "
                             "method (kill-osd, wait, start-osd)"),
    ({"baseline_after": "start-osd-again"}, "invalid baseline_after 'start-osd-again'"),
    ({"restore": 3}, "invalid restore 3"),
    ({"tail_s": -1}, "invalid tail_s -1: expected seconds from 0 to 3600"),
    ({"tail_s": "10"}, "invalid tail_s '10'"),
    ({"tail_s": True}, "invalid tail_s True"),
    ({"api": ["s3"]}, "invalid api ['s3']"),
    ({"baseline": {"on_invalid": "ignore"}}, "invalid baseline.on_invalid 'ignore'"),
])
def test_an_argument_that_makes_no_sense_is_one_message(arguments, message):
    with pytest.raises(PreflightError) as raised:
        plan_of(EXPERIMENT, {"workload": WORKLOAD, **arguments})
    assert message in str(raised.value)


def test_a_capacity_after_an_activity_the_method_lacks_is_refused():
    with pytest.raises(InvalidCalibration, match="'nope' is not an activity of the method"):
        plan_of(EXPERIMENT, {"workload": WORKLOAD, "capacity": {"after": "nope"}})
