"""Abort conditions: alerts that stop a run.

An experiment declares them in the Faultline control's arguments:

    "abort_on": [
      {"alertname": "FaultlineLostObjects"},
      {"alertname": "CephClusterDegraded", "labels": {"severity": "ticket"}, "grace_s": 180}
    ]

A firing alert on the run (service.monitoring.alerts puts it there) matches a condition when its
alertname is the condition's and it carries every label the condition names with the same
value. `grace_s` is how long after the fault a matching alert is expected and tolerated
(a degraded cluster right after an OSD kill is the point of the experiment); an alert that
began before the fault, or more than grace_s after it, aborts the run. Without grace_s
(0), any matching alert aborts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .exceptions import AbortConditionError

KEYS = {"alertname", "labels", "grace_s"}


@dataclass(frozen=True)
class AbortCondition:
    alertname: str
    labels: dict[str, str] = field(default_factory=dict)
    grace_s: float = 0.0

    def matches(self, alertname: str, labels: dict[str, str], starts_ts: float,
                fault_ts: float | None) -> bool:
        if alertname != self.alertname:
            return False
        if any(labels.get(k) != v for k, v in self.labels.items()):
            return False
        if fault_ts is None or starts_ts < fault_ts:
            return True  # the cluster was not meant to be hurt yet
        return starts_ts - fault_ts > self.grace_s

    def describe(self) -> str:
        labels = ",".join(f'{k}="{v}"' for k, v in sorted(self.labels.items()))
        grace = f" after a grace of {self.grace_s:g} s" if self.grace_s else ""
        return f"{self.alertname}{{{labels}}}{grace}"


def parse(spec: Any) -> list[AbortCondition]:
    """The control's `abort_on` argument, checked; AbortConditionError says what is wrong."""
    if spec is None:
        return []
    if not isinstance(spec, list):
        raise AbortConditionError("abort_on must be a list of conditions")
    out = []
    for i, item in enumerate(spec):
        where = f"abort_on[{i}]"
        if not isinstance(item, dict):
            raise AbortConditionError(f"{where} must be an object")
        unknown = set(item) - KEYS
        if unknown:
            raise AbortConditionError(f"{where}: unknown field {sorted(unknown)[0]!r} "
                                      f"(known: {', '.join(sorted(KEYS))})")
        name = item.get("alertname")
        if not isinstance(name, str) or not name.strip():
            raise AbortConditionError(f"{where}: alertname is required")
        labels = item.get("labels", {})
        if not isinstance(labels, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in labels.items()):
            raise AbortConditionError(f"{where}: labels must map label names to strings")
        grace = item.get("grace_s", 0)
        if isinstance(grace, bool) or not isinstance(grace, int | float) or grace < 0:
            raise AbortConditionError(f"{where}: grace_s must be a number of seconds >= 0")
        out.append(AbortCondition(name, dict(labels), float(grace)))
    return out


def first_match(conditions: list[AbortCondition], alerts: list[dict[str, Any]],
                fault_ts: float | None) -> tuple[AbortCondition, dict[str, Any]] | None:
    """The first (condition, alert) pair that aborts the run, alerts taken in time order."""
    for alert in sorted(alerts, key=lambda a: a["starts_ts"]):
        for condition in conditions:
            if condition.matches(alert["alertname"], alert["labels"], alert["starts_ts"],
                                 fault_ts):
                return condition, alert
    return None
