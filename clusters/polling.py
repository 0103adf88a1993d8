"""Waiting for something against a deadline: the one poll loop of the production code.

A wait asks its check at once, and again after each pause, until the check answers with a
true value; once the deadline has passed it gives up, saying what it waited for and how
long. The check is asked at least once (a wait of 0 s is one look), and once more after the
last pause, so what came true during that pause is seen rather than timed out.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

from clusters.exceptions import ClusterError

T = TypeVar("T")

# a fixed pause in seconds, or the pause after an ask that took the given seconds
# (clusters.swift.admin.poll_pause keeps a costly poll to a share of the time)
Interval = float | Callable[[float], float]


class PollTimeout(ClusterError):
    """A wait's deadline passed before what it waited for held."""


def poll_until(what: str, check: Callable[[], T], timeout_s: float, interval_s: Interval = 1.0,
               *, error: Callable[[str], BaseException] = PollTimeout,
               message: str | Callable[[Any], str] | None = None,
               retry_on: tuple[type[BaseException], ...] = ()) -> T:
    """Ask check() until it answers with a true value, and return that value.

    A false answer, or an exception of `retry_on`, is asked again after `interval_s` (or
    interval_s(seconds the ask took)); any other exception goes through. Once `timeout_s`
    have passed since the call, the last false answer ends the wait: `error(message)` is
    raised, where `message` is given, or made from the last answer (the exception, for one
    of retry_on), or by default "waited <timeout_s> s for <what>"."""
    deadline = time.monotonic() + timeout_s
    while True:
        asked = time.monotonic()
        try:
            last: Any = check()
            if last:
                return last
        except retry_on as exc:
            last = exc
        if time.monotonic() >= deadline:
            said = (f"waited {timeout_s:.0f} s for {what}" if message is None
                    else message(last) if callable(message) else message)
            raise error(said) from None
        time.sleep(interval_s(time.monotonic() - asked) if callable(interval_s)
                   else interval_s)
