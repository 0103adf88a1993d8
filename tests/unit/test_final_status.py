"""A run's final status from what it recorded (service.runs.final_status), rule by rule."""

from __future__ import annotations

import pytest

from service.runs.final_status import Ending, final_status


def test_a_run_that_went_as_planned_keeps_the_experiment_status():
    assert final_status(Ending("completed")) == ("completed", None)
    assert final_status(Ending("completed", deviated=True)) == ("deviated", None)
    assert final_status(Ending(None)) == ("failed", None)  # no journal


def test_an_unrestored_fault_fails_the_run_whatever_else_happened():
    ending = Ending("completed", unrestored="FAULT NOT RESTORED: osd.1 down", error="verify",
                    baseline_invalid="rate missed", deviations=["came back"],
                    aborted="alert fired")
    assert final_status(ending) == ("failed", "FAULT NOT RESTORED: osd.1 down")


def test_a_baseline_that_did_not_hold_is_invalid_before_any_other_error():
    status, error = final_status(Ending("completed", error="verify failed: x",
                                        baseline_invalid="the cluster stalled"))
    assert status == "invalid"
    assert error == "the baseline did not hold, nothing was injected: the cluster stalled"


@pytest.mark.parametrize(("ending", "expected"), [
    (Ending("completed", error="load failed", deviations=["back"]), ("failed", "load failed")),
    (Ending("completed", deviations=["osd.1 came back", "osd.2 came back"], not_taken="x"),
     ("invalid", "the fault's intent was not kept: osd.1 came back; osd.2 came back")),
    (Ending("completed", not_taken="no such unit", aborted="alert"),
     ("invalid", "the fault did not take: no such unit")),
    (Ending("completed", deviated=True, aborted="CephDown fired"),
     ("interrupted", "CephDown fired")),
])
def test_the_first_rule_that_applies_decides(ending, expected):
    assert final_status(ending) == expected
