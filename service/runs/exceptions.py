"""The runs package's errors, under its one root RunsError (service.exceptions
says what their kinds mean)."""

from __future__ import annotations

from service.exceptions import Conflict, FaultlineError, InvalidInput


class RunsError(FaultlineError):
    """Errors of running an experiment, its load drivers and its heal."""


class HealError(RunsError):
    """A fault's restore cannot be called (not under actions., or not a function)."""


class HealFailed(RunsError):
    """A restore failed (its fault stays in the ledger) or the heal could not start."""


class DriverGone(RunsError):
    """The run no longer wants this driver (it ended, or gave up waiting)."""


class CalibrationError(RunsError):
    """A calibration could not be made."""


class ClusterNotHealthy(CalibrationError, Conflict):
    """The cluster is degraded: what it serves now is not its capacity."""


class NoCapacity(CalibrationError, Conflict):
    """A calibration found no stage to call the capacity (errors in every one)."""


class ObjectsRemoved(RunsError, Conflict):
    """The run's objects were deleted by `faultline clean`: there is nothing to read back."""


class RunStillLive(RunsError, Conflict):
    """The run is queued or running: its objects are still being written and read."""


class ForeignObjects(RunsError, InvalidInput):
    """The run's ledger names objects outside its workload's containers: not deleted."""
