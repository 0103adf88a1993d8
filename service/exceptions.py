"""What kind of error the service raised on purpose, whatever package raised it.

Each package of the service has one root exception (in its `exceptions` module), all of
them under FaultlineError; a package's errors also say which kind they are, so that the
web (service.web.errors) maps kinds, not every class, to an HTTP status, and the command
line (service.cli.group) prints any of them as one line:

    FaultlineError
     +-- InvalidInput    what was asked makes no sense (an invalid file, field, filter)
     +-- NotFound        what was named does not exist
     +-- Conflict        what exists is not in a state that allows it
     +-- Forbidden       what was asked needs a role the asker does not have
"""

from __future__ import annotations


class FaultlineError(Exception):
    """An error the service raised on purpose, with a message for the person who caused it."""


class InvalidInput(FaultlineError, ValueError):
    """What was asked makes no sense; nothing was changed."""


class NotFound(FaultlineError, LookupError):
    """What was named does not exist."""


class Conflict(FaultlineError):
    """What was named exists, but not in a state that allows what was asked."""


class Forbidden(FaultlineError):
    """What was asked needs a stronger role than the asker's; nothing was changed."""
