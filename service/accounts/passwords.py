"""Password hashing with Argon2id (argon2-cffi), its parameters those of the library's
current defaults, so a hash made with older parameters is upgraded at the next login."""

from __future__ import annotations

from functools import cache

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from .exceptions import WeakPassword

MIN_LENGTH = 8


@cache
def hasher() -> PasswordHasher:
    return PasswordHasher()


def check_strength(password: str) -> str:
    if len(password) < MIN_LENGTH:
        raise WeakPassword(f"a password needs at least {MIN_LENGTH} characters")
    return password


def hash_password(password: str) -> str:
    return hasher().hash(check_strength(password))


def verify(password_hash: str, password: str) -> bool:
    try:
        return hasher().verify(password_hash, password)
    except (VerificationError, InvalidHashError):
        return False


def needs_rehash(password_hash: str) -> bool:
    return hasher().check_needs_rehash(password_hash)


@cache
def _dummy_hash() -> str:
    return hasher().hash("not a password of anyone")


def burn_verify_time(password: str) -> None:
    """Spend the time a real verification takes, so that an unknown name answers as slowly
    as a wrong password and response times do not tell which names exist."""
    verify(_dummy_hash(), password)
