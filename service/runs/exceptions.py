"""The runs package's errors, under its one root RunsError (service.exceptions
says what their kinds mean)."""

from __future__ import annotations

from service.exceptions import FaultlineError


class RunsError(FaultlineError):
    """Errors of running an experiment, its load drivers and its heal."""


class HealError(RunsError):
    """A fault's restore cannot be called (not under actions., or not a function)."""


class HealFailed(RunsError):
    """A restore failed (its fault stays in the ledger) or the heal could not start."""


class DriverGone(RunsError):
    """The run no longer wants this driver (it ended, or gave up waiting)."""
