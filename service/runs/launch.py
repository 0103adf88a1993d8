"""Start a run of an experiment from this process: `faultline run`, a suite's run, a trial,
a queued run in its runner.

In this order, before chaoslib is called, so that bad input changes nothing and no
rollback runs on a cluster that took no fault:
1. the target cluster, from the inventory (read once);
2. what needs no cluster (the allow-list, a protected cluster, the control's arguments,
   the actions' arguments), so that a bad file never waits for a lock;
3. the cluster's lock (a run from the queue waits for it, $FAULTLINE_CLUSTER_WAIT_S);
4. the one preflight that asks the cluster (the load's credentials, SSH to every node, the
   actions' live checks), under the lock: another run's fault cannot fail it.

The control (service.runs.hooks) then takes over the cluster, the lock and what the
preflight found from here (`take`), rather than reading, taking and checking them again;
under the stock `chaos run` nothing is prepared and it does all of it itself. The cluster
and the inventory reach the experiment's activities as configuration values
(chaoslib's experiment variables), never through this process's environment.
"""

from __future__ import annotations

import copy
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chaoslib.experiment import run_experiment

from clusters.access.inventory import Cluster, load_cluster
from clusters.paths import default_inventory
from service.experiments import documents, preflight
from service.experiments.allowlist import CONFIGURATION
from service.experiments.plan import RunPlan
from service.experiments.suites import Suite
from service.jobs.cluster_lock import ClusterLock
from service.store import db

logger = logging.getLogger("chaostoolkit")
ROLLBACK_ALWAYS = {"runtime": {"rollbacks": {"strategy": "always"}}}


@dataclass
class Prepared:
    """What the control of this process's next run takes over."""
    experiment: dict[str, Any]  # the object chaoslib runs: the control finds it by identity
    cluster: Cluster
    lock: ClusterLock
    plan: RunPlan
    taken: bool = False


_prepared: Prepared | None = None


def take(experiment: dict[str, Any]) -> Prepared | None:
    """The prepared run of this experiment object, once; None under the stock `chaos run`."""
    global _prepared
    prepared = _prepared
    if prepared is None or prepared.experiment is not experiment or prepared.taken:
        return None
    prepared.taken = True
    return prepared


def lock_cluster(name: str) -> ClusterLock:
    """The cluster's lock, waiting up to $FAULTLINE_CLUSTER_WAIT_S (the worker sets it);
    ClusterBusy names the run that holds it. Here for a run this process starts, and by
    the control under the stock `chaos run`."""
    wait_s = float(os.environ.get("FAULTLINE_CLUSTER_WAIT_S", "0"))
    if wait_s:
        logger.info(f"Waiting up to {wait_s:.0f} s for cluster {name} to be free")
    url = db.database_url()
    return ClusterLock(url, name).acquire(db.session_factory(url), wait_s=wait_s)


def run(path: str | Path, cluster: str | None = None,
        inventory: str | None = None) -> dict[str, Any]:
    """Run an experiment file on a cluster; return the Chaos Toolkit journal."""
    return run_document(documents.load(path), str(Path(path)), cluster, inventory)


def for_suite(suite: Suite) -> Callable[[str, str | None, str | None], dict[str, Any]]:
    """Runs an entry's file as it is, or as the suite's workload and calibration make it."""
    def run_entry(path: str, cluster: str | None, inventory: str | None) -> dict[str, Any]:
        if not suite.workload and suite.calibration is None:
            return run(path, cluster, inventory)
        return run_document(suite.document(path), str(Path(path)), cluster, inventory)
    return run_entry


def run_document(experiment: dict[str, Any], experiment_path: str | None,
                 cluster: str | None = None, inventory: str | None = None,
                 run_id: int | None = None) -> dict[str, Any]:
    """Run a loaded experiment; with `run_id`, the control records into that queued run."""
    global _prepared
    inventory = str(inventory or default_inventory())
    experiment = copy.deepcopy(experiment)  # the caller's document stays as it was given
    target = load_cluster(inventory, documents.target_cluster(cluster))
    arguments = documents.control_arguments(experiment)
    if experiment_path:
        arguments["experiment_path"] = experiment_path
    if run_id is not None:
        arguments["run_id"] = run_id
    plan = preflight.check_without_cluster_access(experiment, target, arguments)
    lock = lock_cluster(target.name)
    try:
        preflight.check_live(experiment, target, plan)
    except BaseException:
        lock.release()
        raise
    _prepared = Prepared(experiment, target, lock, plan)
    try:
        return run_experiment(experiment, settings=ROLLBACK_ALWAYS,
                              experiment_vars=(_target_values(experiment, target, inventory),
                                               {}))
    finally:
        # nothing needs the lock once chaoslib has returned, whoever took it over (a run
        # whose control never reached its end would otherwise keep it in this process,
        # and a suite's or the trials' next run would find its cluster busy)
        lock.release()
        _prepared = None


def _target_values(experiment: dict[str, Any], cluster: Cluster,
                   inventory: str) -> dict[str, str]:
    """The configuration values that aim every activity at this cluster. An experiment that
    declares no such key gets it, read as an experiment file would (chaoslib applies only
    the variables of keys the experiment declares)."""
    configuration = experiment.setdefault("configuration", {})
    for key, variable in CONFIGURATION.items():  # as the allow-list binds them
        configuration.setdefault(key, {"type": "env", "key": variable, "default": ""})
    return {"faultline_cluster": cluster.name, "faultline_inventory": inventory}
