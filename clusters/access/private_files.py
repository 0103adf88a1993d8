"""Files named in the inventory that hold a secret (SSH keys, BMC passwords) must be the
user's own and private: no group or other permission bits, owned by the user Faultline
runs as (or root). A key another account can read is that account's key too; one it can
change lets it swap the key. Checked each time the file is used, so a file that changed
since the inventory was loaded is caught.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from clusters.exceptions import InsecureSecretFile


def open_to_others(path: str | Path) -> bool:
    """Readable or writable by the file's group or by anyone else."""
    return bool(stat.S_IMODE(Path(path).stat().st_mode) & 0o077)


def check_private(path: str | Path, what: str) -> None:
    """InsecureSecretFile naming `what` (e.g. "SSH key file of node node1"), the file and its
    mode when others can read or change it, or it belongs to another user."""
    path = Path(path).expanduser()
    try:
        info = path.stat()
    except OSError as exc:
        raise InsecureSecretFile(f"cannot read the {what} {path}: "
                                 f"{exc.strerror or exc}") from None
    mode = stat.S_IMODE(info.st_mode)
    if open_to_others(path):
        raise InsecureSecretFile(
            f"refusing the {what} {path}: other users can read or change it (mode "
            f"{mode:04o}); make it private with `chmod 600 {path}`")
    if info.st_uid not in (os.geteuid(), 0):
        raise InsecureSecretFile(
            f"refusing the {what} {path}: it belongs to uid {info.st_uid}, not to uid "
            f"{os.geteuid()} that runs Faultline (nor root); `chown` it")
