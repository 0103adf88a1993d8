"""The results package's errors, under its one root ResultsError (service.exceptions
says what their kinds mean)."""

from __future__ import annotations

from service.exceptions import FaultlineError, InvalidInput, NotFound


class ResultsError(FaultlineError):
    """Errors of reading runs and their figures."""


class RunNotFound(ResultsError, NotFound):
    """No run of that id."""


class CompareError(ResultsError, InvalidInput):
    """The comparison was asked for something that cannot be compared (fewer than two runs)."""


class RunQueryError(ResultsError, InvalidInput):
    """A filter or paging value that makes no sense."""


class JournalNotRecorded(ResultsError, NotFound):
    """The run has no Chaos Toolkit journal (yet)."""


class CalibrationNotFound(ResultsError, NotFound):
    """No calibration of that id, or none yet of that cluster."""


class InvalidCalibration(ResultsError, InvalidInput):
    """Calibration settings that make no sense (a stage too short, a p99 factor below 1)."""
