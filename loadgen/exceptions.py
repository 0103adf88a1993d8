"""Errors of the load generator.

    LoadError
     +-- WorkloadError   the workload makes no sense (negative rate, bad mix, size 0, ...)
     +-- DriverError     the driver could not reach or set up its target
"""


class LoadError(Exception):
    """Root of the load generator's errors."""


class WorkloadError(LoadError):
    pass


class DriverError(LoadError):
    pass
