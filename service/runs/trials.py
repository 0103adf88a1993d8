"""`faultline run --trials N`: one experiment repeated N times on one cluster, its runs
stamped as one group, so that a comparison gives each figure's spread
(service.results.trial_groups) and judges each outcome figure by the method of
docs/statistics.md.

Between two trials, whatever fault a trial left is restored (the fault ledger) and the
cluster is given up to BETWEEN_TRIALS_S to be healthy and fully redundant again: a trial
that starts on a cluster still recovering from the last one would measure the two faults
together. A cluster that does not get there ends the trials, saying so.
"""

from __future__ import annotations

import logging
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

import probes.ceph
import probes.swift
from clusters.access.inventory import load_cluster
from clusters.exceptions import ClusterError
from clusters.paths import default_inventory
from loadgen.exceptions import LoadError
from service.exceptions import FaultlineError
from service.experiments import documents
from service.experiments.repeats import not_recorded, repeat

from . import heal, launch

logger = logging.getLogger("chaostoolkit")

BETWEEN_TRIALS_S = 600.0
HEALTHY = {"ceph": probes.ceph.health_ok, "swift": probes.swift.healthy}


def run_trials(sessions: sessionmaker[Session], experiment_path: str, cluster: str | None,
               inventory: str | None, trials: int) -> dict[str, Any]:
    """Run the experiment `trials` times; return the group id, the cluster and each trial's
    outcome."""
    name = documents.target_cluster(cluster)
    inventory = str(inventory or default_inventory())
    load_cluster(inventory, name)  # an unknown cluster stops here, before any trial

    def run_once() -> tuple[int | None, str | None]:
        try:  # e.g. another run took the cluster during the settle: this trial only
            journal = launch.run(experiment_path, name, inventory)
        except (ClusterError, LoadError, FaultlineError) as exc:
            return None, str(exc)
        run_id = journal.get("faultline_run_id")
        return run_id, not_recorded(journal) if run_id is None else None

    group, outcomes = repeat(sessions, trials, name, inventory, run_once,
                             lambda cluster, inv: settle(sessions, cluster, inv),
                             f"{experiment_path} on {name}")
    return {"trial_group": group, "cluster": name, "trials": outcomes}


def settle(sessions: sessionmaker[Session], cluster: str, inventory: str) -> str | None:
    """Restore what the last trial left, wait for health; None, or why the trials stop."""
    kind = load_cluster(inventory, cluster).kind
    for result in heal.heal_everywhere(sessions, cluster, inventory):
        if not result["restored"]:
            return f"could not restore {result['description']}: {result['error']}"
        logger.info(f"Restored what the last trial left: {result['description']}")
    configuration = {"faultline_cluster": cluster, "faultline_inventory": inventory}
    if not HEALTHY[kind](settle_s=BETWEEN_TRIALS_S, configuration=configuration):
        return (f"{cluster} was not healthy and fully redundant {BETWEEN_TRIALS_S:.0f} s "
                "after the last trial: the next one would measure two faults at once")
    return None
