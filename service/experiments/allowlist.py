"""The one allow-list of what an experiment may run, checked at upload, when a run is queued,
and by the runner right before it runs the document stored in the run's row.

What may run is what Chaos Toolkit discovery reports (each module's `__all__`, as
`chaos discover faultline` lists them): the (module, function) pairs of Faultline's
action and probe modules, and the control `service.control`. Everything else is refused:

- a control, at any level (experiment, hypothesis, activity), that is not service.control,
  or that passes it an argument the control does not read, or that has any key but name
  and provider (a `scope` would skip one of its hooks); more than one service.control at
  the experiment level;
- a provider of any other type than python (no `process`, no `http`), a (module, function)
  pair that discovery does not list (`actions.__init__`, a helper a module imports), an
  argument the function's signature does not take; tolerance probes included;
- configuration other than the documented keys, each read from its fixed environment
  variable (faultline_cluster from FAULTLINE_CLUSTER, faultline_inventory from
  FAULTLINE_INVENTORY): a literal value would aim the run at another cluster than the one
  it was checked and locked for, and any other variable could echo a secret;
- a `secrets` block anywhere: Faultline reads its own secrets, an experiment holds none.

`problems` returns every problem at once; `check` raises one ExperimentError with them all.
Guard overrides (`allow_unavailable`, `baseline.on_invalid: inject-anyway`) are allowed
by the list but need the admin role: `guard_overrides` names them, `check_guard_overrides`
refuses them to anyone else.
"""

from __future__ import annotations

import inspect
from functools import cache
from importlib import import_module
from typing import Any

from chaoslib.discovery.discover import discover_actions, discover_probes

from actions import ACTION_MODULES, PROBE_MODULES

from .exceptions import ExperimentError, GuardOverrideRefused
from .shape import check_shape

CONTROL_MODULE = "service.control"
CONTROL_KEYS = frozenset({"name", "provider"})
EXPERIMENT_LEVEL = "at the experiment level"
# what the control reads from an experiment's arguments (service.runs.control,
# service.experiments.preflight)
CONTROL_ARGUMENTS = frozenset({"workload", "fault", "restore", "tail_s", "baseline_after",
                               "baseline", "calibration", "capacity", "abort_on", "api"})
# what the service gives the control as it runs a run (service.runs.launch): an
# experiment's own would record into another run, or pass an upload off as a file
SERVICE_ARGUMENTS = frozenset({"run_id", "experiment_path"})
# configuration key -> the environment variable it must be read from
CONFIGURATION = {"faultline_cluster": "FAULTLINE_CLUSTER",
                 "faultline_inventory": "FAULTLINE_INVENTORY"}
CONFIGURATION_ENTRY_KEYS = frozenset({"type", "key", "default"})
# the arguments an activity passes to chaoslib rather than to the function's caller
PASSED_BY_CHAOSLIB = frozenset({"configuration", "secrets"})
ALLOW_UNAVAILABLE = "allow_unavailable"
INJECT_ANYWAY = "inject-anyway"


@cache
def activities() -> dict[tuple[str, str], inspect.Signature]:
    """(module, function) -> signature of every activity discovery reports."""
    found = [a for m in ACTION_MODULES for a in discover_actions(m)]
    found += [a for m in PROBE_MODULES for a in discover_probes(m)]
    return {(a["mod"], a["name"]): inspect.signature(getattr(import_module(a["mod"]),
                                                             a["name"]))
            for a in found}


def check(document: Any, as_run: bool = False) -> None:
    """ExperimentError naming every reason the document may not run; nothing if it may.
    `as_run`: the document as the service runs it, with the control's run_id and
    experiment_path set."""
    if not isinstance(document, dict):
        raise ExperimentError("the experiment must be a JSON object")
    check_shape(document)
    found = problems(document, as_run)
    if found:
        raise ExperimentError("the experiment may only run Faultline's own actions, probes "
                              f"and control: {'; '.join(found)}")


def problems(document: dict[str, Any], as_run: bool = False) -> list[str]:
    """Every reason the (well-shaped) document may not run, in document order."""
    found = [f"a secrets block at {where}: an experiment holds no secrets"
             for where in _secrets_blocks(document, "the experiment")]
    found += _configuration_problems(document.get("configuration"))
    found += _controls_problems(document.get("controls"), EXPERIMENT_LEVEL, as_run)
    hypothesis = document.get("steady-state-hypothesis") or {}
    found += _controls_problems(hypothesis.get("controls"), "at the hypothesis level")
    for activity in _activities(document):
        found += _activity_problems(activity)
    return found


def guard_overrides(document: dict[str, Any]) -> list[str]:
    """The guard overrides the document asks for, each named with where it is."""
    found = []
    for activity in _activities(document):
        arguments = (activity.get("provider") or {}).get("arguments")
        # any value but false: "false" or "${name}" is truthy to the action
        if isinstance(arguments, dict) and arguments.get(ALLOW_UNAVAILABLE) not in (
                None, False):
            found.append(f"{ALLOW_UNAVAILABLE} (activity {activity.get('name')!r})")
    for control in document.get("controls") or []:
        arguments = (control.get("provider") or {}).get("arguments") or {}
        baseline = arguments.get("baseline") if isinstance(arguments, dict) else None
        if isinstance(baseline, dict) and baseline.get("on_invalid") == INJECT_ANYWAY:
            found.append(f"baseline.on_invalid {INJECT_ANYWAY} (control "
                         f"{control.get('name')!r})")
    return found


def check_guard_overrides(document: dict[str, Any], user: str | None,
                          role: str | None) -> str | None:
    """Who overrides the guard (the user, an admin) if the document does; None if it does
    not; GuardOverrideRefused if it does and the user is not an admin."""
    overrides = guard_overrides(document)
    if not overrides:
        return None
    if role != "admin":
        who = (f"{user} is {'an' if role[0] in 'aeiou' else 'a'} {role}" if user and role
               else f"{user or 'the request'} is not an admin")
        raise GuardOverrideRefused(f"{', '.join(overrides)} overrides the guard that keeps "
                                   f"data available: that needs the admin role; {who}")
    return user or "unknown"


def check_stored(document: Any, override_by: str | None) -> None:
    """What the runner checks of the document in a run's row right before it runs it: the
    allow-list, and that a guard override was let through by an admin when it was queued
    (a row rewritten in the database has no such admin). ExperimentError if not."""
    check(document)
    overrides = guard_overrides(document)
    if overrides and not override_by:
        raise ExperimentError(f"{', '.join(overrides)} overrides the guard, and no admin "
                              "allowed it when the run was queued")


def _activities(document: dict[str, Any]) -> list[dict[str, Any]]:
    """Every activity that runs a provider: the hypothesis' probes and their tolerance
    probes, the method, the rollbacks, and dynamic configuration probes are refused with
    the configuration."""
    hypothesis = document.get("steady-state-hypothesis") or {}
    found = []
    for activity in ((hypothesis.get("probes") or []) + (document.get("method") or [])
                     + (document.get("rollbacks") or [])):
        if not isinstance(activity, dict):
            continue
        found.append(activity)
        tolerance = activity.get("tolerance")
        if isinstance(tolerance, dict) and "provider" in tolerance:
            found.append({**tolerance, "name": f"{activity.get('name')} (its tolerance)"})
    return found


def _activity_problems(activity: dict[str, Any]) -> list[str]:
    name = activity.get("name")
    found = _controls_problems(activity.get("controls"), f"of activity {name!r}")
    provider = activity.get("provider")
    if not isinstance(provider, dict):
        return found  # a reference to another activity ("ref"), checked where it is
    kind, module, func = provider.get("type"), provider.get("module"), provider.get("func")
    if kind != "python":
        return found + [f"activity {name!r} runs a {kind} provider: only python functions "
                        "of Faultline's actions and probes may run"]
    signature = activities().get((module, func))
    if signature is None:
        return found + [f"activity {name!r} calls {module}.{func}, which is not one of "
                        "Faultline's actions or probes"]
    arguments = provider.get("arguments") or {}
    for argument in arguments:
        if argument in PASSED_BY_CHAOSLIB or argument not in signature.parameters:
            found.append(f"activity {name!r}: {module}.{func} takes no argument {argument!r}")
    return found


def _controls_problems(controls: Any, where: str, as_run: bool = False) -> list[str]:
    found = []
    ours = [c for c in controls or [] if isinstance(c, dict)
            and (c.get("provider") or {}).get("module") == CONTROL_MODULE]
    if where == EXPERIMENT_LEVEL and len(ours) > 1:
        # the plan is made from the first; a second would run unchecked beside it
        found.append(f"{len(ours)} {CONTROL_MODULE} controls {where}: one records a run")
    for control in controls or []:
        if not isinstance(control, dict):
            continue
        name, provider = control.get("name"), control.get("provider") or {}
        if set(control) - CONTROL_KEYS:
            # a scope would skip the control's before or after hook: faults with no run
            # record, no baseline gate, no ledger, or a run never ended
            found.append(f"control {name!r} {where} may only have name and provider, not "
                         f"{', '.join(sorted(map(str, set(control) - CONTROL_KEYS)))}")
        if provider.get("type") != "python" or provider.get("module") != CONTROL_MODULE:
            what = (f"module {provider.get('module')}" if provider.get("type") == "python"
                    else f"a {provider.get('type')} provider")
            found.append(f"control {name!r} {where} is {what}: the only control allowed is "
                         f"{CONTROL_MODULE}")
            continue
        for argument in provider.get("arguments") or {}:
            if argument in SERVICE_ARGUMENTS:
                if not as_run:
                    found.append(f"control {name!r} {where}: {argument!r} is the service's "
                                 "to set, not the experiment's")
            elif argument not in CONTROL_ARGUMENTS:
                found.append(f"control {name!r} {where}: {CONTROL_MODULE} takes no argument "
                             f"{argument!r}")
    return found


def _configuration_problems(configuration: Any) -> list[str]:
    found = []
    for key, entry in (configuration or {}).items():
        variable = CONFIGURATION.get(key)
        if variable is None:
            found.append(f"configuration {key!r} is not one of {', '.join(CONFIGURATION)}")
        elif not isinstance(entry, dict):
            found.append(f"configuration {key!r} must be read from the environment "
                         f'({{"type": "env", "key": "{variable}"}}), not a literal value')
        elif entry.get("type") != "env":
            found.append(f"configuration {key!r} must be of type env, not "
                         f"{entry.get('type')!r}")
        elif entry.get("key") != variable:
            found.append(f"configuration {key!r} must read the environment variable "
                         f"{variable}, not {entry.get('key')!r}")
        elif set(entry) - CONFIGURATION_ENTRY_KEYS:
            found.append(f"configuration {key!r} may only have type, key and default, not "
                         f"{', '.join(sorted(set(entry) - CONFIGURATION_ENTRY_KEYS))}")
    return found


def _secrets_blocks(value: Any, where: str) -> list[str]:
    """Where a `secrets` key is, at any depth (chaoslib reads them at the top and in
    providers; none has a place in a Faultline experiment)."""
    found = []
    if isinstance(value, dict):
        for key, item in value.items():
            here = f"{where}.{key}"
            if key == "secrets":
                found.append(here)
            found += _secrets_blocks(item, here)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found += _secrets_blocks(item, f"{where}[{i}]")
    return found
