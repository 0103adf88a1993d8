"""The store package's errors, under its one root StoreError (service.exceptions
says what their kinds mean)."""

from __future__ import annotations

from service.exceptions import FaultlineError


class StoreError(FaultlineError):
    """Errors of the database: its server, its schema, its records."""


class DatabaseSetupError(StoreError):
    """The database server cannot be found, started or set up."""


class RunNotQueued(StoreError):
    """A worker was asked to start a run that is no longer queued."""


class InsecureSecretFile(StoreError):
    """A file holding a secret is readable or writable by other users."""
