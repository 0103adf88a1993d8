"""API tokens: random, shown once, stored only as their SHA-256.

A token is 256 random bits, so nobody can guess it or brute-force it from its hash: a fast
hash is enough (a slow one like Argon2 protects low-entropy passwords, and would cost every
API request its time). The hash is looked up directly, so no comparison leaks timing about
the token either.
"""

from __future__ import annotations

import hashlib
import secrets

PREFIX = "fl_"
PREFIX_SHOWN = len(PREFIX) + 6  # what lists show so users can tell their tokens apart


def new_token() -> str:
    return PREFIX + secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def shown_prefix(token: str) -> str:
    return token[:PREFIX_SHOWN]
