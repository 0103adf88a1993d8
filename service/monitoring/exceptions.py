"""The monitoring package's errors, under its one root MonitoringError (service.exceptions
says what their kinds mean)."""

from __future__ import annotations

from service.exceptions import FaultlineError, InvalidInput


class MonitoringError(FaultlineError):
    """Prometheus or Alertmanager did not start, or its config is wrong; an alert
    notification that is not one."""


class AlertPayloadError(MonitoringError, InvalidInput):
    """The webhook's body is not an Alertmanager notification."""
