"""The schema's migrations on a real PostgreSQL server: several commands that start at once
on a new database (a worker, `chaos run`, the dashboard) all find it migrated; none fails."""

from __future__ import annotations

import subprocess
import sys

from alembic.script import ScriptDirectory
from sqlalchemy import create_engine, make_url, text

from service.store import db

NAME = "faultline_test_migrate_race"


def test_four_commands_migrating_one_new_database_at_once_all_succeed(database_url):
    admin = create_engine(database_url, isolation_level="AUTOCOMMIT")
    fresh = make_url(database_url).set(database=NAME).render_as_string(hide_password=False)
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{NAME}" WITH (FORCE)'))
        conn.execute(text(f'CREATE DATABASE "{NAME}"'))
    try:
        # the race needs the four to reach the version table together: started at once
        started = [subprocess.Popen(
            [sys.executable, "-c", "import sys; from service.store import db; "
                                   "db.migrate(sys.argv[1])", fresh],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(4)]
        outcomes = [(p.wait(timeout=300), p.stderr.read()[-600:]) for p in started]

        assert [rc for rc, _ in outcomes] == [0, 0, 0, 0], outcomes
        head = ScriptDirectory.from_config(db.alembic_config(fresh)).get_current_head()
        probe = create_engine(fresh)
        with probe.connect() as conn:
            assert conn.execute(text("SELECT version_num FROM alembic_version")).scalars() \
                .all() == [head]
        probe.dispose()
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{NAME}" WITH (FORCE)'))
        admin.dispose()
