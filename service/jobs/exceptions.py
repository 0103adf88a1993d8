"""The jobs package's errors, under its one root JobsError (service.exceptions
says what their kinds mean)."""

from __future__ import annotations

from service.exceptions import Conflict, FaultlineError, NotFound


class JobsError(FaultlineError):
    """Errors of the job queue and of the clusters' locks."""


class QueueError(JobsError, Conflict):
    """The run cannot be queued or cancelled as asked."""


class ClusterBusy(JobsError, Conflict):
    """Another run holds the cluster."""


class HealJobNotFound(JobsError, NotFound):
    """No heal job of that id."""
