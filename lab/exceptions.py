"""The lab's errors, under one root: the CLI prints any LabError as one `error:` line."""

from __future__ import annotations


class LabError(RuntimeError):
    """The lab could not be brought up or down; the message says what was waited for."""


class DaemonError(LabError):
    """A daemon did not start (its launcher failed or it never wrote its pid file)."""


class DiskError(LabError):
    """A lab disk could not be mounted or unmounted."""


class NodeError(LabError):
    """A node container did not boot or did not stop; the message says what was seen."""


class RootfsError(LabError):
    """The root filesystem could not be built; the message names the step and its log."""


class SwiftCallFailed(LabError):
    """One Swift API call got an unexpected answer; `retryable` if waiting may help."""

    def __init__(self, message: str, retryable: bool):
        super().__init__(message)
        self.retryable = retryable
