"""Abort conditions: parsing with one clear message per mistake, and matching by name,
labels and the grace after the fault."""

from __future__ import annotations

import pytest

from service.experiments.abort_conditions import (
    AbortCondition,
    AbortConditionError,
    first_match,
    parse,
)

FAULT = 1000.0


def _alert(name: str, starts: float, **labels: str) -> dict:
    return {"alertname": name, "labels": {"alertname": name, **labels}, "starts_ts": starts}


def test_parse_gives_conditions_with_defaults():
    assert parse(None) == []
    assert parse([{"alertname": "A"}, {"alertname": "B", "labels": {"cluster": "x"},
                                       "grace_s": 30}]) == [
        AbortCondition("A"), AbortCondition("B", {"cluster": "x"}, 30.0)]


@pytest.mark.parametrize(("spec", "message"), [
    ({"alertname": "A"}, "must be a list"),
    (["A"], "abort_on[0] must be an object"),
    ([{"labels": {}}], "abort_on[0]: alertname is required"),
    ([{"alertname": "A", "label": {}}], "unknown field 'label'"),
    ([{"alertname": "A", "labels": {"severity": 2}}], "labels must map"),
    ([{"alertname": "A", "grace_s": -1}], "grace_s must be"),
    ([{"alertname": "A", "grace_s": True}], "grace_s must be"),
])
def test_a_bad_condition_says_what_is_wrong(spec, message):
    with pytest.raises(AbortConditionError, match=message.replace("[", r"\[").replace("]", r"\]")):
        parse(spec)


def test_name_and_every_label_must_match():
    condition = AbortCondition("CephClusterDegraded", {"severity": "page"})
    assert condition.matches("CephClusterDegraded", {"severity": "page", "x": "y"}, FAULT + 1,
                             FAULT)
    assert not condition.matches("CephClusterDegraded", {"severity": "ticket"}, FAULT + 1, FAULT)
    assert not condition.matches("Other", {"severity": "page"}, FAULT + 1, FAULT)


def test_the_grace_tolerates_what_the_fault_is_expected_to_cause():
    condition = AbortCondition("CephClusterDegraded", grace_s=60)
    assert not condition.matches("CephClusterDegraded", {}, FAULT + 59, FAULT)
    assert condition.matches("CephClusterDegraded", {}, FAULT + 61, FAULT)
    assert condition.matches("CephClusterDegraded", {}, FAULT - 1, FAULT)  # before the fault
    assert condition.matches("CephClusterDegraded", {}, 5.0, None)  # no fault yet


def test_first_match_takes_alerts_in_time_order():
    conditions = [AbortCondition("A", grace_s=10), AbortCondition("B")]
    alerts = [_alert("B", FAULT + 30), _alert("A", FAULT + 5), _alert("A", FAULT + 20)]
    condition, alert = first_match(conditions, alerts, FAULT)
    assert (condition.alertname, alert["starts_ts"]) == ("A", FAULT + 20)
    assert first_match(conditions, [_alert("A", FAULT + 5)], FAULT) is None
