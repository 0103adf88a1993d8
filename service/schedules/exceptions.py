"""The schedules package's errors, under its one root SchedulesError (service.exceptions
says what their kinds mean)."""

from __future__ import annotations

from service.exceptions import Conflict, FaultlineError, InvalidInput, NotFound


class SchedulesError(FaultlineError):
    """Errors of schedules."""


class ScheduleError(SchedulesError, InvalidInput):
    """A schedule's cron expression or time zone is not valid; the message quotes it."""


class ScheduleNotFound(SchedulesError, NotFound):
    """No schedule of that id."""


class ScheduleExists(ScheduleError, Conflict):
    """A schedule of that name exists already."""
