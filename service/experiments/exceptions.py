"""The experiments package's errors, under its one root ExperimentsError (service.exceptions
says what their kinds mean)."""

from __future__ import annotations

from service.exceptions import Conflict, FaultlineError, Forbidden, InvalidInput, NotFound


class ExperimentsError(FaultlineError):
    """Errors of experiment files, suites and their checks."""


class ExperimentError(ExperimentsError, InvalidInput):
    """The experiment file is missing, malformed or invalid."""


class PreflightError(ExperimentsError, InvalidInput):
    """An activity of the experiment cannot work on this cluster."""


class AbortConditionError(ExperimentsError, InvalidInput):
    """An abort condition that makes no sense."""


class SuiteError(ExperimentsError, InvalidInput):
    """The suite file is missing or invalid; nothing was run."""


class ExperimentNotFound(ExperimentsError, NotFound):
    """No experiment file nor upload of that name."""


class ExperimentExists(ExperimentsError, Conflict):
    """An upload's name is taken (by a file or another upload)."""


class NotAnUpload(ExperimentsError, Conflict):
    """Asked to delete an experiment that is a file, not an upload."""


class CatalogueError(ExperimentsError, NotFound):
    """No experiment or suite of that name in the catalogue."""


class GuardOverrideRefused(ExperimentsError, Forbidden):
    """The experiment overrides the blast-radius guard and the asker is not an admin."""
