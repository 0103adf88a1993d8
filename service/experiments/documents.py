"""Load, check and run Chaos Toolkit experiment files through chaoslib.

Everything a user can get wrong (the file, the cluster, the workload) is
checked before the experiment starts, so a bad input changes nothing.
"""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

from chaoslib.exceptions import ChaosException
from chaoslib.experiment import ensure_experiment_is_valid, run_experiment
from chaoslib.loader import load_experiment

from clusters.access.inventory import Cluster, load_cluster
from clusters.paths import default_cluster, default_inventory

from .allowlist import CONTROL_MODULE
from .exceptions import ExperimentError
from .preflight import (
    check_activities,
    check_control_arguments,
    check_protected,
    check_run,
)
from .shape import check_shape

ROLLBACK_ALWAYS = {"runtime": {"rollbacks": {"strategy": "always"}}}


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


def check(experiment: dict[str, Any], cluster: str | None = None,
          inventory: str | None = None) -> Cluster:
    """Check the target cluster, the workload and that the nodes answer; return the cluster."""
    target = load_cluster(inventory or default_inventory(), target_cluster(cluster))
    check_run(experiment, target, _control_arguments(experiment))
    return target


def check_static(experiment: dict[str, Any], cluster: str | None = None,
                 inventory: str | None = None) -> Cluster:
    """What can be checked without reaching the cluster (it may be busy with another run's
    fault): the cluster is in the inventory, every argument of the control is one the run
    takes, the actions' arguments fit the cluster. For runs that wait in the queue; the rest
    is checked when they start."""
    target = load_cluster(inventory or default_inventory(), target_cluster(cluster))
    check_protected(experiment, target)
    check_control_arguments(experiment, _control_arguments(experiment))
    check_activities(experiment, target)
    return target


def with_workload(experiment: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """A copy of the experiment whose Faultline workload has these fields replaced."""
    experiment = copy.deepcopy(experiment)
    arguments = _control_arguments(experiment)
    arguments["workload"] = {**(arguments.get("workload") or {}), **overrides}
    return experiment


def _control_arguments(experiment: dict[str, Any]) -> dict[str, Any]:
    control = faultline_control(experiment)
    if control is None:
        raise ExperimentError(f"the experiment declares no {CONTROL_MODULE} control, so "
                              "Faultline would record nothing")
    return control.setdefault("provider", {}).setdefault("arguments", {})


def run(path: str | Path, cluster: str | None = None,
        inventory: str | None = None) -> dict[str, Any]:
    """Run an experiment file on a cluster; return the Chaos Toolkit journal."""
    return run_document(load(path), str(Path(path)), cluster, inventory)


def run_document(experiment: dict[str, Any], experiment_path: str | None,
                 cluster: str | None = None, inventory: str | None = None,
                 run_id: int | None = None) -> dict[str, Any]:
    """Run a loaded experiment; with `run_id`, the control records into that queued run."""
    target = check(experiment, cluster, inventory)
    # The experiment reads its target from these, exactly as under `chaos run`.
    os.environ["FAULTLINE_CLUSTER"] = target.name
    os.environ["FAULTLINE_INVENTORY"] = str(inventory or default_inventory())
    arguments = _control_arguments(experiment)
    if experiment_path:
        arguments["experiment_path"] = experiment_path
    if run_id is not None:
        arguments["run_id"] = run_id
    # Restore even when the method fails or is interrupted (Ctrl-C): chaoslib's default
    # strategy skips rollbacks then, and would leave the fault in place.
    return run_experiment(experiment, settings=ROLLBACK_ALWAYS)
