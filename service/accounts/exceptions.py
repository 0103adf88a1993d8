"""Errors of the accounts package: each one a user can cause, with a message to show as is.

    AccountError
     +-- InvalidName       a user or token name that is empty, too long or has odd characters
     +-- InvalidRole       a role other than viewer, operator, admin
     +-- InvalidTokenLifetime  a token expiry of 0 or less, or past ten years
     +-- WeakPassword      a password shorter than the minimum
     +-- UserExists        a user of that name exists already
     +-- UnknownUser       no user of that name
     +-- BadCredentials    a refused login: one message whatever failed (unknown name, wrong
     |    |                password, disabled user, too many failures)
     |    +-- UserDisabled the password is right but the user is disabled
     +-- InvalidToken      an API token that is unknown, revoked, or of a disabled user
     |    +-- TokenExpired past the expiry it was created with
     +-- UnknownToken      no API token of that id
     +-- InvalidAuditQuery a page, size or time the audit trail cannot be read with
"""

from __future__ import annotations

from service.exceptions import Conflict, FaultlineError, InvalidInput, NotFound


class AccountError(FaultlineError):
    """Root of every error about users and tokens."""


class InvalidName(AccountError, InvalidInput):
    pass


class InvalidRole(AccountError, InvalidInput):
    pass


class InvalidTokenLifetime(AccountError, InvalidInput):
    pass


class WeakPassword(AccountError, InvalidInput):
    pass


class UserExists(AccountError, Conflict):
    pass


class UnknownUser(AccountError, NotFound):
    pass


class BadCredentials(AccountError):
    pass


class UserDisabled(BadCredentials):
    pass


class InvalidToken(AccountError):
    pass


class TokenExpired(InvalidToken):
    pass


class UnknownToken(AccountError, NotFound):
    pass


class InvalidAuditQuery(AccountError, InvalidInput):
    pass
