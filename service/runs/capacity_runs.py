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


def scale_figures(session: Session, run_id: int, fault_ts: float | None,
                  measured: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """A scale run's own figures: `capacity` (before -> after, service.results.capacity_change)
    and `data_movement_s`, from the scale action's end to no misplaced or degraded object
    and full redundancy (with `reasons` for it when n/a)."""
    figures: dict[str, Any] = {"capacity": capacity_change.change(measured.get("before"),
                                                                  measured.get("after"))}
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
