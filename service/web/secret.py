"""The key that signs the dashboard's session cookies and CSRF tokens, and the shared
token Alertmanager sends to the alert webhook.

Each from its environment variable if set (FAULTLINE_SECRET_KEY, FAULTLINE_ALERT_TOKEN);
else made once on this machine and kept in `$FAULTLINE_HOME/secret_key` or
`$FAULTLINE_HOME/alert-token` (mode 0600), so they survive a restart and every web
process of the machine agrees.
"""

from __future__ import annotations

import os
import secrets
import tempfile
from pathlib import Path

from clusters.paths import state_dir

ENV = "FAULTLINE_SECRET_KEY"
ALERT_TOKEN_ENV = "FAULTLINE_ALERT_TOKEN"


def secret_key() -> str:
    return os.environ.get(ENV) or stored_key(state_dir() / "secret_key")


def alert_token() -> str:
    return os.environ.get(ALERT_TOKEN_ENV) or stored_key(state_dir() / "alert-token")


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
