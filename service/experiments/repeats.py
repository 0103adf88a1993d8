"""Trials of one experiment on one cluster: run it N times, let the cluster settle between
two trials, and stamp the runs as one group, compared with their spread
(service.results.trial_groups). `faultline run --trials` (service.runs.trials) and a suite's
entries with `trials` (service.experiments.suites) both go through here.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from service.store.recording import stamp_trial

logger = logging.getLogger("chaostoolkit")

MAX_TRIALS = 50
# one run of the experiment: (run id, error), the run id None when no run was recorded
RunOnce = Callable[[], tuple[int | None, str | None]]
# between two trials: (cluster, inventory) -> None, or why the trials stop
Settle = Callable[[str, str], str | None]


def repeat(sessions: sessionmaker[Session], trials: int, cluster: str, inventory: str,
           run_once: RunOnce, settle: Settle | None, label: str
           ) -> tuple[str | None, list[dict[str, Any]]]:
    """The group (None for a single trial, which is not one) and each trial's outcome
    (trial, trials, run id, error); stops at a cluster that does not settle, with that
    trial's outcome saying why."""
    group = uuid.uuid4().hex[:16] if trials > 1 else None
    outcomes: list[dict[str, Any]] = []
    for trial in range(1, trials + 1):
        outcome: dict[str, Any] = {"trial": trial, "trials": trials, "run_id": None,
                                   "error": None}
        outcomes.append(outcome)
        problem = settle(cluster, inventory) if settle and trial > 1 else None
        if problem:
            outcome["error"] = f"trial {trial} not run: {problem}"
            break
        logger.info(label + (f", trial {trial} of {trials}" if group else ""))
        outcome["run_id"], outcome["error"] = run_once()
        if group and outcome["run_id"] is not None:
            stamp_trial(sessions, outcome["run_id"], group, trial, trials)
    return group, outcomes


def not_recorded(journal: dict[str, Any]) -> str:
    return f"the experiment ended {journal.get('status')} before Faultline started a run"
