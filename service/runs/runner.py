"""Run one queued run in this process: `python -m service.runs.runner RUN_ID`.

A worker starts one of these per run, so every experiment has a process of its
own: chaoslib and the control keep per-process state, SIGUSR1 interrupts it
the way Chaos Toolkit documents (rollbacks still run), and a run survives the
worker that started it. The run's row holds everything it needs: the
experiment document, the cluster and the inventory. The document is checked against the
allow-list (service.experiments.allowlist) before anything else: a row rewritten in the
database ends `invalid` with the reason, and nothing of it runs.
"""

from __future__ import annotations

import logging
import os
import sys

from service.experiments import allowlist
from service.experiments.exceptions import ExperimentError
from service.store import db
from service.store.models import Run
from service.store.recording import fail_queued
from service.store.scrub import scrub_logs

from . import heal, launch, reaper

# A run from the queue waits for a cluster held by a `faultline run` from the command line.
CLUSTER_WAIT_S = 6 * 3600


def run_queued(run_id: int) -> str:
    """Run it; return the run's final status."""
    sessions = db.session_factory()
    with sessions() as session:
        run = session.get(Run, run_id)
        if run is None or run.status != "queued" or run.experiment is None:
            return run.status if run is not None else "missing"
        experiment, cluster, inventory = run.experiment, run.cluster, run.inventory
        path, override_by = run.experiment_path, run.guard_override_by
    try:  # the row may have been rewritten since it was queued: check it again, first
        allowlist.check_stored(experiment, override_by)
    except ExperimentError as exc:
        fail_queued(sessions, run_id, f"refused, nothing was run: {exc}", status="invalid")
        return "invalid"
    os.environ.setdefault("FAULTLINE_CLUSTER_WAIT_S", str(CLUSTER_WAIT_S))
    # as `faultline run` does: close the runs that died, undo what they left on this cluster
    reaper.interrupt_dead_runs(sessions, "a worker's run, before it started")
    for result in heal.heal_everywhere(sessions, cluster, inventory, only_orphaned=True):
        if not result["restored"]:
            fail_queued(sessions, run_id, f"could not heal {result['description']} left by a "
                                          f"run that died: {result['error']}")
            return "failed"
        logging.getLogger("chaostoolkit").warning(
            f"healed a fault left by a run that died: {result['description']}")
    try:
        journal = launch.run_document(experiment, path, cluster, inventory, run_id=run_id)
    except Exception as exc:  # checked when queued, but a cluster changes: say why
        fail_queued(sessions, run_id, f"could not start: {exc}")
        raise
    # the control stopped before it took the run over (its reason is on the row already)
    fail_queued(sessions, run_id, f"the experiment ended {journal.get('status')} before the "
                                  "run started")
    with sessions() as session:
        return session.get(Run, run_id).status


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or not args[0].isdigit():
        print("usage: python -m service.runs.runner RUN_ID", file=sys.stderr)
        return 2
    scrub_logs()  # the run's log is shown to whoever reads the worker's files
    status = run_queued(int(args[0]))
    return 0 if status in ("completed", "deviated") else 1


if __name__ == "__main__":
    sys.exit(main())
