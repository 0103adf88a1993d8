"""The files under FAULTLINE_HOME that hold a secret must be readable by their owner only.

Faultline keeps its session key, tokens, passwords and SSH keys as files under
FAULTLINE_HOME. A copy restored with the wrong umask, or a `chmod -R a+r` of the tree,
would hand them to every local account; Faultline then refuses to start and says which
file and how to fix it, rather than run with its secrets open.
"""

from __future__ import annotations

import stat
from pathlib import Path

from clusters.access.private_files import open_to_others
from clusters.paths import state_dir

from .exceptions import InsecureSecretFile

# relative to FAULTLINE_HOME: Faultline's own secrets, then the labs' keys and credentials
# Faultline's own secrets, each one value (the scrubber hides them in what is shown)
OWN_SECRETS = ("secret_key", "alert-token", "demo-password", "pg-password")
SECRET_GLOBS = (
    *OWN_SECRETS, "pgpass/*",
    "monitoring/config/secrets/*",
    "lab/ssh/id_*",
    "lab/*/sshd/*/ssh_host_*_key",
    "lab/ceph/rgw/*key*",
    "lab/swift/etc/*.key",
)


def secret_files(home: Path | None = None) -> list[Path]:
    home = home or state_dir()
    found = {p for pattern in SECRET_GLOBS for p in home.glob(pattern)
             if p.is_file() and not p.name.endswith(".pub")}
    return sorted(found)


def check(home: Path | None = None) -> None:
    """InsecureSecretFile naming the first secret file that others can read or change."""
    for path in secret_files(home):
        if open_to_others(path):
            mode = stat.S_IMODE(path.stat().st_mode)
            raise InsecureSecretFile(
                f"refusing to start: {path} holds a secret and other users can read or change "
                f"it (mode {mode:04o}); make it private with `chmod 600 {path}`")
