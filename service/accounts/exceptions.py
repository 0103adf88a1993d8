"""Errors of the accounts package: each one a user can cause, with a message to show as is.

    AccountError
     +-- InvalidName       a user or token name that is empty, too long or has odd characters
     +-- InvalidRole       a role other than viewer, operator, admin
     +-- WeakPassword      a password shorter than the minimum
     +-- UserExists        a user of that name exists already
     +-- UnknownUser       no user of that name
     +-- BadCredentials    wrong name or password (the same message for both)
     |    +-- UserDisabled the password is right but the user is disabled
     +-- InvalidToken      an API token that is unknown, revoked, or of a disabled user
     +-- UnknownToken      no API token of that id
"""


class AccountError(Exception):
    """Root of every error about users and tokens."""


class InvalidName(AccountError):
    pass


class InvalidRole(AccountError):
    pass


class WeakPassword(AccountError):
    pass


class UserExists(AccountError):
    pass


class UnknownUser(AccountError):
    pass


class BadCredentials(AccountError):
    pass


class UserDisabled(BadCredentials):
    pass


class InvalidToken(AccountError):
    pass


class UnknownToken(AccountError):
    pass
