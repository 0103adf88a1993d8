"""The environment of the processes a worker starts (a run, a heal): the worker's own, less
the secrets they do not need.

Gone: the dashboard's session key and the alert token (service.web.secret reads them from
FAULTLINE_SECRET_KEY and FAULTLINE_ALERT_TOKEN), PostgreSQL passwords in variables, and the
database password in DATABASE_URL, which libpq reads from a passfile instead
(service.store.passfile). What a run does need stays: FAULTLINE_HOME, the inventory, and a
Swift key an inventory names by its environment variable.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from service.store import passfile

NOT_FOR_RUNS = frozenset({"FAULTLINE_SECRET_KEY", "FAULTLINE_ALERT_TOKEN", "PGPASSWORD",
                          "POSTGRES_PASSWORD"})


def process_environment(url: str, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for a run's or a heal's process on the database at `url`."""
    environ = os.environ if environ is None else environ
    kept = {name: value for name, value in environ.items() if name not in NOT_FOR_RUNS}
    bare_url, extra = passfile.without_password(url)
    return {**kept, "DATABASE_URL": bare_url, **extra}
