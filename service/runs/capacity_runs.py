"""Capacity before and after a scale action, measured inside a run (the control's
`capacity` argument): the same calibration as `faultline calibrate`, of the run's workload
shape, once before the steady load starts and once after a named activity (the one that
waits until the added capacity is in and the data movement is over).

The second calibration cannot share the cluster with the steady load (each would measure
the other), so the steady load ends there: what follows in the method (the removal) runs
without client load, and the run's disruption figures cover the scale-out and its data
movement. Either calibration may fail (the cluster not healthy, no knee): the run goes on
and the report says why the capacity is n/a. Works for any cluster kind: a Swift scale
experiment names its own activity.

    "capacity": {"after": "data-movement-done", "stage_s": 5, "warmup_s": 1,
                 "max_in_flight": 32}
"""

from __future__ import annotations

import logging
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from actions import fault_spec
from clusters.access.inventory import Cluster
from loadgen.workload import Workload
from service.results import capacity_change
from service.results.capacity import Settings
from service.store.models import Calibration, ClusterSample

from . import calibration

logger = logging.getLogger("chaostoolkit")


def measure(sessions: sessionmaker[Session], database_url: str, cluster: Cluster,
            workload: Workload, api: str, settings: Settings, which: str) -> dict[str, Any]:
    """Calibrate now (the run holds the cluster's lock); the run's figures of it. A failure
    is kept as a figure with its reason, not raised: the run's other figures still count."""
    logger.info(f"Measuring {cluster.name}'s capacity {which} the scale action "
                f"(a calibration of the workload's shape)")
    try:
        calibration_id = calibration.calibrate(sessions, database_url, cluster, workload, api,
                                               settings, locked=True)
    except Exception as exc:  # noqa: BLE001 - any failure is a figure's reason here
        logger.error(f"Capacity {which} the scale action not measured: {exc}")
        return capacity_change.calibration_figures(None, f"{type(exc).__name__}: {exc}")
    with sessions() as session:
        figures = capacity_change.calibration_figures(session.get(Calibration, calibration_id))
    logger.info(f"Capacity {which}: {figures['capacity_ops']} ops/s (calibration "
                f"{calibration_id}" + ("" if figures["valid"] else f"; {figures['why']}") + ")")
    return figures


# a scale action takes nothing down: the figures that time a failure have nothing to time.
# (A Ceph drain's degraded PGs would otherwise read as the cluster "detecting" the removal.)
NO_FAULT = ("adding capacity is no fault: the cluster has nothing to detect and no lost "
            "redundancy to regain; the scale figures are the data movement and the capacity")
FAILURE_ONLY = ("time_to_detect_s", "time_to_full_redundancy_s",
                "time_to_full_redundancy_after_restore_s")


def is_scale_run(experiment: dict[str, Any], fault_name: str | None) -> bool:
    """The run's fault activity calls an action that adds capacity and takes nothing down
    (actions.fault_spec: Fault.takes_down)."""
    activity = next((a for a in experiment.get("method") or []
                     if isinstance(a, dict) and a.get("name") == fault_name), None)
    action = fault_spec.action_of(activity)
    return action is not None and not action.fault.takes_down


def scale_figures(session: Session, run_id: int, fault_ts: float | None,
                  measured: dict[str, dict[str, Any]] | None, reasons: dict[str, str],
                  scale: bool) -> dict[str, Any]:
    """The figures of a scale run (`scale`), or of a run that measured its capacity before
    and after (`measured`, the control's; None if it measured none: an A/A control run
    pauses where a scale run scales): `capacity` (before -> after,
    service.results.capacity_change) and `data_movement_s`, from the fault action's end to no
    misplaced or degraded object and full redundancy (with `reasons` for it when n/a). A
    scale run's failure-only figures are n/a, with NO_FAULT as their reason."""
    if not scale and measured is None:
        return {}
    figures: dict[str, Any] = {}
    if scale:
        figures = {key: None for key in FAILURE_ONLY}
        figures["reasons"] = {**reasons, **dict.fromkeys(FAILURE_ONLY, NO_FAULT)}
    if measured is not None:
        figures["capacity"] = capacity_change.change(measured.get("before"),
                                                     measured.get("after"))
    if fault_ts is None:
        figures["data_movement_s"] = None
        figures["data_movement_reason"] = "the scale action did not run"
        return figures
    states = session.execute(select(ClusterSample.ts, ClusterSample.state)
                             .where(ClusterSample.run_id == run_id)
                             .order_by(ClusterSample.ts)).all()
    figures["data_movement_s"] = capacity_change.movement_done_s(
        [(ts, state) for ts, state in states], fault_ts)
    figures["data_movement_reason"] = None if figures["data_movement_s"] is not None else (
        "objects were still misplaced or degraded, or the cluster not fully redundant, "
        "when the run ended")
    return figures
