"""Swift 2.30's tools and servers read /etc/swift/swift.conf from a hard-wired path. For a
cluster whose swift.conf lives elsewhere they run with `SWIFT_CONF_FILE` set and this
`sitecustomize.py` on PYTHONPATH, which points Swift at it.

Swift reads the hash path prefix and suffix when `swift.common.utils` is imported, from
/etc/swift/swift.conf if the machine has one (Debian's `swift` package ships one with
`changeme`): the shim clears them and reads them again from the file it names. Without
that, the tools on such a machine hashed every name with the wrong prefix, and a
dispersion report of a cluster whose servers read the right file found no copy at all.
"""

from __future__ import annotations

from pathlib import Path

SHIM = '''\
"""Written by Faultline (clusters/swift/conf_shim.py): Swift reads $SWIFT_CONF_FILE."""
import os

_conf = os.environ.get("SWIFT_CONF_FILE")
if _conf:
    import swift.common.utils as _utils

    _utils.SWIFT_CONF_FILE = _conf
    _utils.HASH_PATH_PREFIX = _utils.HASH_PATH_SUFFIX = b""
    try:
        _utils.validate_hash_conf()
    except (OSError, _utils.InvalidHashPathConfigError):
        pass  # the tool that needs them says so, naming the file
'''


def write_shim(directory: Path) -> Path:
    """Write the shim as `sitecustomize.py` in `directory`; returns its path."""
    path = directory / "sitecustomize.py"
    path.write_text(SHIM)
    return path
