"""Load and check Chaos Toolkit experiment files: a file that is not an experiment, an
experiment without the Faultline control, a run queued with arguments the control would
refuse. service.runs.launch runs them.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from chaoslib.exceptions import ChaosException
from chaoslib.experiment import ensure_experiment_is_valid
from chaoslib.loader import load_experiment

from clusters.access.inventory import Cluster, load_cluster
from clusters.paths import default_cluster, default_inventory

from .allowlist import CONTROL_MODULE
from .exceptions import ExperimentError
from .plan import plan_of
from .preflight import check_activities, check_protected
from .shape import check_shape


def load(path: str | Path) -> dict[str, Any]:
    path = Path(path)
    if not path.is_file():
        raise ExperimentError(f"experiment file {path} does not exist")
    try:
        json.loads(path.read_text()) if path.suffix == ".json" else None
    except json.JSONDecodeError as exc:
        raise ExperimentError(f"{path} is not valid JSON: {exc}") from None
    try:
        experiment = load_experiment(str(path))
        check_shape(experiment)
        ensure_experiment_is_valid(experiment)
    except ChaosException as exc:
        raise ExperimentError(f"{path} is not a valid experiment: {exc}") from None
    except ExperimentError as exc:
        raise ExperimentError(f"{path}: {exc}") from None
    return experiment


def faultline_control(experiment: dict[str, Any]) -> dict[str, Any] | None:
    for control in experiment.get("controls", []):
        if control.get("provider", {}).get("module") == CONTROL_MODULE:
            return control
    return None


def target_cluster(cluster: str | None = None) -> str:
    """The name of the cluster `run` targets: the one given, else FAULTLINE_CLUSTER, else
    lab-ceph (the experiment file's own default is not consulted)."""
    return cluster or default_cluster()


def check_static(experiment: dict[str, Any], cluster: str | None = None,
                 inventory: str | None = None) -> Cluster:
    """What can be checked without reaching the cluster (it may be busy with another run's
    fault): the cluster is in the inventory, every argument of the control is one the run
    takes, the actions' arguments fit the cluster. For runs that wait in the queue; the rest
    is checked when they start."""
    target = load_cluster(inventory or default_inventory(), target_cluster(cluster))
    check_protected(experiment, target)
    plan_of(experiment, control_arguments(experiment))
    check_activities(experiment, target)
    return target


def with_workload(experiment: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """A copy of the experiment whose Faultline workload has these fields replaced."""
    experiment = copy.deepcopy(experiment)
    arguments = control_arguments(experiment)
    arguments["workload"] = {**(arguments.get("workload") or {}), **overrides}
    return experiment


def control_arguments(experiment: dict[str, Any]) -> dict[str, Any]:
    control = faultline_control(experiment)
    if control is None:
        raise ExperimentError(f"the experiment declares no {CONTROL_MODULE} control, so "
                              "Faultline would record nothing")
    return control.setdefault("provider", {}).setdefault("arguments", {})
