"""What an operation's error class says about its effect, for loadgen.consistency.

An answer that refuses the request (an HTTP 4xx; an errno the OSD replied with) means it
took no effect: "failed". Everything else may have been applied before the answer was
lost: a timeout, a dropped connection, an HTTP 5xx (Swift answers 503 when too few
object servers acknowledged, yet the ones that did keep the object), a librados op that
was cancelled. Those are "unknown": never charged to the store as lost, and "recovered"
if they turn up.
"""

from __future__ import annotations

from .consistency import FAILED, OK, UNKNOWN

# librados errors that do not say the OSD refused the operation: it may have been applied
_RADOS_UNKNOWN = frozenset({"timeout", "ETIMEDOUT", "EIO", "ESHUTDOWN", "ECANCELED",
                            "ENOTCONN", "ECONNRESET", "ECONNREFUSED", "EAGAIN", "EINTR"})


def outcome(ok: bool, error_class: str | None) -> str:
    """ok, failed or unknown, from a driver's (ok, error class)."""
    if ok:
        return OK
    error = (error_class or "").strip()
    status = error.split(" ", 1)[0]
    if status.isdigit():  # HTTP: "404", "503", "404 NoSuchKey"
        return FAILED if 400 <= int(status) < 500 else UNKNOWN
    if error.startswith("E") and error.isupper() and error not in _RADOS_UNKNOWN:
        return FAILED  # an errno name: the OSD answered with it
    return UNKNOWN
