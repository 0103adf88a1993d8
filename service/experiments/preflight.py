"""What is checked before a run starts anything, under `faultline run` and `chaos run` alike.

The allow-list of what an experiment may run (service.experiments.allowlist: a file run
from the command line or by `chaos run` is held to it too), the workload, the abort
conditions, what to do if the baseline does not hold, the load API and its credentials
(authenticated, nothing written), SSH to every node that runs a service, and the arguments
of Faultline's own actions (an unknown server, OSD or node), so a bad input changes
nothing: no run row, no load, no fault. Right after the allow-list: a fault on a cluster
whose inventory does not say `chaos: allowed` (clusters.safety.protection) is refused.
"""

from __future__ import annotations

import importlib
from typing import Any

from chaoslib.exceptions import ActivityFailed

from clusters.access.inventory import Cluster
from clusters.access.preflight import check_nodes_reachable
from clusters.safety.protection import check_fault_allowed
from loadgen.drivers import driver_for

from . import allowlist
from .exceptions import ExperimentError, PreflightError
from .fault_scope import RESTORES, WATCHES
from .plan import RunPlan, plan_of

ACTION_PACKAGE = "actions."


def default_api(cluster: Cluster) -> str:
    return "rados" if cluster.kind == "ceph" else "swift"


def check_run(experiment: dict[str, Any], cluster: Cluster,
              arguments: dict[str, Any]) -> RunPlan:
    """Check everything a run needs; return its plan (its load API resolved)."""
    plan = check_without_cluster_access(experiment, cluster, arguments)
    check_live(experiment, cluster, plan)
    return plan


def check_without_cluster_access(experiment: dict[str, Any], cluster: Cluster,
                                 arguments: dict[str, Any]) -> RunPlan:
    """What a run needs that the inventory alone can say: the allow-list, a protected
    cluster, the control's arguments (the plan) and the actions' arguments."""
    try:  # what the document may run at all, before anything about the cluster
        allowlist.check(experiment, as_run=True)
    except ExperimentError as exc:
        raise PreflightError(str(exc)) from None
    check_protected(experiment, cluster)
    plan = plan_of(experiment, arguments)
    plan = plan.for_api(plan.api or default_api(cluster))
    # the api fits the cluster and its credentials are configured: made, not connected
    driver_for(cluster, plan.workload, plan.api)
    check_activities(experiment, cluster)
    return plan


def check_live(experiment: dict[str, Any], cluster: Cluster, plan: RunPlan) -> None:
    """What only the cluster can say, asked once per run (under its lock): the load API
    answers with the credentials (authenticated, nothing written), SSH reaches every node
    that runs a service, and the actions' live checks pass."""
    driver_for(cluster, plan.workload, plan.api).check_access()
    check_nodes_reachable(cluster)
    check_activities(experiment, cluster, hook="check_live")


def check_protected(experiment: dict[str, Any], cluster: Cluster) -> None:
    """ProtectedCluster (clusters.exceptions) if the experiment injects any fault and the
    cluster takes none. A fault is any of Faultline's actions but a restore or a watch,
    wherever it stands (a rollback too: the actions refuse it there anyway)."""
    faults = []
    hypothesis = experiment.get("steady-state-hypothesis") or {}
    hypothesis = hypothesis if isinstance(hypothesis, dict) else {}
    for activity in (_listed(hypothesis, "probes") + _listed(experiment, "method")
                     + _listed(experiment, "rollbacks")):
        provider = activity.get("provider") if isinstance(activity, dict) else None
        provider = provider if isinstance(provider, dict) else {}
        module, func = str(provider.get("module") or ""), str(provider.get("func"))
        if module.startswith(ACTION_PACKAGE) and func not in RESTORES | WATCHES:
            faults.append(f"{activity.get('name')} ({module}.{func})")
    if faults:
        check_fault_allowed(cluster, "the fault " + ", ".join(dict.fromkeys(faults)))


def _listed(document: dict[str, Any], key: str) -> list:
    value = document.get(key)
    return value if isinstance(value, list) else []


def check_activities(experiment: dict[str, Any], cluster: Cluster,
                     hook: str = "check_arguments") -> None:
    """Ask each of Faultline's action modules whether its activities' arguments make sense
    on this cluster (their `check_arguments`, from the inventory alone; or, as a run starts,
    their `check_live`, which may ask the cluster, e.g. whether a named object exists);
    every problem in one message (one problem of several activities, e.g. a node's power off
    and its power on in the method and the rollbacks, named once with all of them)."""
    problems: dict[str, list[str]] = {}
    for activity in experiment.get("method", []) + experiment.get("rollbacks", []):
        provider = activity.get("provider") or {}
        module_name = provider.get("module") or ""
        if provider.get("type") != "python" or not module_name.startswith(ACTION_PACKAGE):
            continue
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            problems.setdefault(f"cannot import {module_name}: {exc}", []).append(
                str(activity.get("name")))
            continue
        check = getattr(module, hook, None)
        if check is None:
            continue
        try:
            check(provider.get("func"), provider.get("arguments") or {}, cluster)
        except ActivityFailed as exc:
            problems.setdefault(str(exc), []).append(str(activity.get("name")))
    if problems:
        raise PreflightError("; ".join(f"{', '.join(dict.fromkeys(names))}: {problem}"
                                       for problem, names in problems.items()))
