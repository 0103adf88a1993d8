"""Trials of one experiment on one cluster: run it N times, let the cluster settle between
two trials, and stamp the runs as one group, compared with their spread
(service.results.trial_groups). `faultline run --trials` (service.runs.trials) and a suite's
entries with `trials` (service.experiments.suites) both go through here.

A trial whose baseline did not hold (its run is "invalid": nothing was injected) is run
once more after the cluster settles again: the group keeps the number of valid trials it
was asked for, whatever transient warning spoiled one baseline, and the invalid run stays
stored and shown, left out of the comparison as any invalid run is. Only once per trial: a
cluster that keeps failing baselines is the finding, not something to retry around.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from service.store.models import Run
from service.store.recording import stamp_trial

logger = logging.getLogger("chaostoolkit")

MAX_TRIALS = 50
AGAIN = 1  # runs more of one trial whose baseline did not hold
# one run of the experiment: (run id, error), the run id None when no run was recorded
RunOnce = Callable[[], tuple[int | None, str | None]]
# between two trials: (cluster, inventory) -> None, or why the trials stop
Settle = Callable[[str, str], str | None]


def repeat(sessions: sessionmaker[Session], trials: int, cluster: str, inventory: str,
           run_once: RunOnce, settle: Settle | None, label: str,
           stopped: Callable[[], str | None] = lambda: None
           ) -> tuple[str | None, list[dict[str, Any]]]:
    """The group (None for a single trial, which is not one) and each run's outcome (trial,
    trials, run id, error; `superseded` on a trial's invalid run that was run again, `again`
    on the run that took its place); stops at a cluster that does not settle, or when
    `stopped()` gives a reason (an operator's Ctrl-C), with that trial's outcome saying
    why."""
    group = uuid.uuid4().hex[:16] if trials > 1 else None
    outcomes: list[dict[str, Any]] = []
    for trial in range(1, trials + 1):
        for attempt in range(1 + (AGAIN if group else 0)):
            outcome: dict[str, Any] = {"trial": trial, "trials": trials, "run_id": None,
                                       "error": None}
            if attempt:
                outcome["again"] = outcomes[-1]["run_id"]
                outcomes[-1]["superseded"] = True
            outcomes.append(outcome)
            problem = stopped()
            if problem:
                outcome["stopped"] = True  # never started: nothing to compare
            elif settle and (trial > 1 or attempt):
                problem = settle(cluster, inventory)
            if problem:
                outcome["error"] = f"trial {trial} not run: {problem}"
                return group, outcomes
            logger.info(label + (f", trial {trial} of {trials}" if group else "")
                        + (" again" if attempt else ""))
            outcome["run_id"], outcome["error"] = run_once()
            if outcome["run_id"] is None:
                break
            if group:
                stamp_trial(sessions, outcome["run_id"], group, trial, trials)
            with sessions() as session:
                invalid = session.get(Run, outcome["run_id"]).status == "invalid"
            if not invalid:
                break
            if group and not attempt:
                logger.warning(f"Trial {trial}'s baseline did not hold (run "
                               f"{outcome['run_id']}: nothing was injected): it runs again "
                               "once the cluster settles")
    return group, outcomes


def final(outcomes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each trial's last run: the outcomes without those run again."""
    return [o for o in outcomes if not o.get("superseded")]


def not_recorded(journal: dict[str, Any]) -> str:
    return f"the experiment ended {journal.get('status')} before Faultline started a run"
