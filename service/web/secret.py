"""The key that signs the dashboard's session cookies and CSRF tokens.

From FAULTLINE_SECRET_KEY if set; else made once on this machine and kept in
`$FAULTLINE_HOME/secret_key` (mode 0600), so sessions survive a restart and every web
process of the machine signs alike.
"""

from __future__ import annotations

import os
import secrets
import tempfile
from pathlib import Path

from clusters.paths import state_dir

ENV = "FAULTLINE_SECRET_KEY"


def secret_key() -> str:
    return os.environ.get(ENV) or stored_key(state_dir() / "secret_key")


def stored_key(path: Path) -> str:
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".secret_key.")  # mode 0600
        try:
            with os.fdopen(fd, "w") as f:
                f.write(secrets.token_hex(32) + "\n")
            try:
                os.link(tmp, path)  # all or nothing; a process that got there first wins
            except FileExistsError:
                pass
        finally:
            os.unlink(tmp)
    key = path.read_text().strip()
    if not key:
        raise PermissionError(f"{path} is empty: delete it and a new key will be made")
    return key
