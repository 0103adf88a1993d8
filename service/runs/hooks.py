"""The Chaos Toolkit hooks of the Faultline control (service.control names them for
experiment files): each finds the run in progress of its experiment and hands it on to
service.runs.control.RunControl. Chaos Toolkit calls controls as module functions, so the
run of each experiment is kept here, keyed by the experiment object's identity.

chaoslib logs any other exception of a control at debug level and goes on, which would
inject the fault with no load and no record: every failure here interrupts the run."""

from __future__ import annotations

import logging
import os
import sys
from typing import Any

from chaoslib.exceptions import InterruptExecution

from clusters.access.config import cluster_from_configuration
from clusters.exceptions import ClusterError, ProtectedCluster
from clusters.safety import fault_ledger
from loadgen.exceptions import LoadError
from service.experiments.preflight import PreflightError
from service.jobs.cluster_lock import ClusterBusy, ClusterLock
from service.results.exceptions import InvalidCalibration
from service.store import db, secret_files
from service.store.exceptions import InsecureSecretFile
from service.store.recording import RunNotQueued, fail_queued

from . import launch
from .control import RunControl
from .exit_signals import PromptExitSignals, prompt_exit_signals

logger = logging.getLogger("chaostoolkit")

_runs: dict[int, RunControl] = {}
_exit_signals: dict[int, PromptExitSignals | None] = {}


def before_experiment_control(context: dict, configuration: dict = None,
                              secrets: dict = None, **arguments: Any) -> None:
    queued_run_id = arguments.get("run_id")
    # locked and checked already when this process started the run (service.runs.launch)
    prepared = launch.take(context)
    lock = prepared.lock if prepared is not None else None
    try:
        secret_files.check()  # `chaos run` starts here, not in the faultline command
        if prepared is not None:
            control = RunControl(context, configuration, arguments, prepared.cluster,
                                 prepared.plan)
        else:
            # the lock first: a busy cluster may fail a preflight check for another run's
            # fault
            lock = _lock_cluster(configuration)
            control = RunControl(context, configuration, arguments)
    except ProtectedCluster as exc:
        _stop_before_start(lock, queued_run_id, str(exc))
        if queued_run_id is None and _under_chaos_cli():
            _exit_refused(str(exc))
        raise InterruptExecution(f"Faultline: {exc}") from None
    except (ClusterError, LoadError, PreflightError, ClusterBusy, InvalidCalibration,
            InsecureSecretFile) as exc:
        _stop_before_start(lock, queued_run_id, str(exc))
        raise InterruptExecution(f"Faultline: {exc}") from None
    except Exception as exc:
        logger.exception("Faultline could not prepare the run")
        _stop_before_start(lock, queued_run_id, f"could not prepare the run: {exc}")
        raise InterruptExecution(f"Faultline could not prepare the run: {exc}") from None
    control.lock = lock
    try:
        control.begin(arguments.get("experiment_path"), queued_run_id)
    except RunNotQueued as exc:
        control.abandon(str(exc))
        raise InterruptExecution(f"Faultline: {exc}") from None
    except Exception as exc:
        control.abandon(str(exc))
        if control.recorder is None and queued_run_id is not None:
            fail_queued(control.sessions, queued_run_id, f"could not start the load: {exc}")
        raise InterruptExecution(f"Faultline could not start the load: {exc}") from None
    _runs[id(context)] = control
    _exit_signals[id(context)] = prompt_exit_signals()  # a cancel must not wait out a pause


def _under_chaos_cli() -> bool:
    return os.path.basename(sys.argv[0] if sys.argv else "") == "chaos"


def _exit_refused(message: str) -> None:
    """End the stock `chaos run` as `faultline run` ends on bad input: one error line, exit
    2. chaoslib catches whatever a control raises, SystemExit included, and would go on to
    the rollbacks (restores on a cluster that took no fault), so the process ends here;
    nothing was started but the cluster lock, released above."""
    sys.stderr.write(f"error: {message}\n")
    sys.stderr.flush()
    os._exit(2)


def _lock_cluster(configuration: dict | None) -> ClusterLock:
    return launch.lock_cluster(cluster_from_configuration(configuration).name)


def _stop_before_start(lock: ClusterLock | None, queued_run_id: int | None,
                       message: str) -> None:
    if lock is not None:
        lock.release()
    if queued_run_id is not None:
        fail_queued(db.session_factory(), queued_run_id, message)


def before_method_control(context: dict, experiment: dict = None, **arguments: Any) -> None:
    control = _runs.get(id(experiment or context))
    if control is not None and control.load is not None:
        control.wait_baseline()


def before_activity_control(context: dict, experiment: dict = None, **arguments: Any) -> None:
    control = _runs.get(id(experiment)) if experiment is not None else None
    if control is not None:
        control.activity_starting(context)


def after_activity_control(context: dict, state: dict = None, experiment: dict = None,
                           **arguments: Any) -> None:
    control = _runs.get(id(experiment)) if experiment is not None else None
    if control is not None and control.recorder is not None:
        control.activity_done(context, state)


def after_experiment_control(context: dict, state: dict = None, **arguments: Any) -> None:
    control = _runs.pop(id(context), None)
    fault_ledger.set_backend(None)  # the rollbacks have run: back to the default ledger
    if control is not None and control.recorder is not None:
        if state is not None:
            state["faultline_run_id"] = control.run_id  # the journal names its run
        try:
            control.end(state)
        except Exception as exc:  # chaoslib would hide it: say it, and close the run
            logger.exception(f"Faultline could not finish run {control.run_id}")
            control.abandon(f"could not finish the run: {exc}")
            if state is not None:
                state["status"] = "failed"
        finally:
            control.release()
    if (watcher := _exit_signals.pop(id(context), None)) is not None:
        watcher.close()
