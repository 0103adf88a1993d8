"""The Faultline control's arguments as one frozen, typed plan, made once from an experiment
and checked completely, wherever a run is asked for: `faultline run` and the runner
(service.runs.launch), a run queued from the API or the dashboard, an upload
(service.experiments.library). The control (service.runs.control) reads the plan only.

Checked here, needing no cluster: the workload, `abort_on`, `baseline`, `calibration`,
`capacity` (its `after` against the method), the activities `fault`, `restore` and
`baseline_after` name (of the method; a restore may be a rollback), `tail_s` and the kind
of `api` (the cluster says which APIs it serves: service.experiments.preflight).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

from loadgen.workload import Workload, parse_workload
from service.results.capacity import CapacityPlan, Settings, capacity_plan, run_settings

from . import abort_conditions
from .exceptions import PreflightError

ON_INVALID = ("stop", "inject-anyway")
DEFAULT_TAIL_S = 10.0
MAX_TAIL_S = 3600.0  # the load after the experiment: past an hour it is another run


@dataclass(frozen=True)
class RunPlan:
    workload: Workload
    abort_on: tuple[abort_conditions.AbortCondition, ...]
    on_invalid: str  # when the baseline does not hold: "stop" or "inject-anyway"
    calibration: tuple[Settings, float]  # how a calibration is made; its age limit (hours)
    capacity: CapacityPlan | None  # a scale run's capacity before and after
    fault: str | None  # the fault activity (None: the method's first action)
    restore: str | None  # the restore activity, if the timeline is to mark it
    tail_s: float  # the load kept on after the experiment
    baseline_after: str | None  # the activity after which the baseline is measured
    api: str | None  # the load's API; None: the cluster's own

    def for_api(self, api: str) -> RunPlan:
        return replace(self, api=api)


def plan_of(experiment: dict[str, Any], arguments: dict[str, Any]) -> RunPlan:
    """The plan of these control arguments; PreflightError (or InvalidCalibration,
    LoadError for the workload) says what is wrong with the first bad one."""
    method = _names(experiment.get("method"))
    rollbacks = _names(experiment.get("rollbacks"))
    api = arguments.get("api")
    if api is not None and not isinstance(api, str):
        raise PreflightError(f"invalid api {api!r}: expected the name of a load API")
    return RunPlan(
        workload=parse_workload(arguments.get("workload")),
        abort_on=tuple(check_abort_on(arguments)),
        on_invalid=on_invalid_baseline(arguments),
        calibration=run_settings(arguments.get("calibration")),
        capacity=capacity_plan(arguments.get("capacity"), experiment),
        fault=_activity("fault", arguments.get("fault"), method, "of the method"),
        restore=_activity("restore", arguments.get("restore"), method + rollbacks,
                          "of the method or the rollbacks"),
        tail_s=tail_seconds(arguments.get("tail_s", DEFAULT_TAIL_S)),
        baseline_after=_activity("baseline_after", arguments.get("baseline_after"), method,
                                 "of the method"),
        api=api)


def check_abort_on(arguments: dict[str, Any]) -> list[abort_conditions.AbortCondition]:
    """The control's abort conditions (`abort_on`), checked."""
    try:
        return abort_conditions.parse(arguments.get("abort_on"))
    except abort_conditions.AbortConditionError as exc:
        raise PreflightError(f"invalid abort_on: {exc}") from None


def on_invalid_baseline(arguments: dict[str, Any]) -> str:
    """What a run does when its baseline did not hold (`baseline.on_invalid`): "stop"
    (default: nothing is injected, the run ends invalid) or "inject-anyway" (for studies of
    overloaded clusters; the run is marked as such everywhere)."""
    policy = arguments.get("baseline") or {}
    if not isinstance(policy, dict) or set(policy) - {"on_invalid"}:
        raise PreflightError('invalid baseline: expected {"on_invalid": "stop" or '
                             f'"inject-anyway"}}, not {json.dumps(policy)}')
    value = policy.get("on_invalid", "stop")
    if value not in ON_INVALID:
        raise PreflightError(f"invalid baseline.on_invalid {value!r}: expected "
                             + " or ".join(repr(v) for v in ON_INVALID))
    return value


def _names(activities: Any) -> list[str]:
    listed = activities if isinstance(activities, list) else []
    return [str(a.get("name")) for a in listed if isinstance(a, dict)]


def _activity(key: str, value: Any, names: list[str], where: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or value not in names:
        raise PreflightError(f"invalid {key} {value!r}: not the name of an activity {where} "
                             f"({', '.join(names) or 'none'})")
    return value


def tail_seconds(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) \
            or not 0 <= value <= MAX_TAIL_S:
        raise PreflightError(f"invalid tail_s {value!r}: expected seconds from 0 to "
                             f"{MAX_TAIL_S:.0f}")
    return float(value)
