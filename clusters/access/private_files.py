"""Files that hold a secret (SSH keys, BMC passwords, API keys): written private from their
first byte (write_private), and checked before use (check_private).

Files named in the inventory that hold a secret must be the
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


def write_private(path: Path, text: str) -> None:
    """Write `path` as a new 0600 file (made with that mode, never chmodded after: no moment
    when others could read it), then renamed over the old one, whatever the old one's mode."""
    partial = path.with_name(f".{path.name}.partial")
    partial.unlink(missing_ok=True)
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(text)
    os.replace(partial, path)
