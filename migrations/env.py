"""Alembic environment: the URL comes from the config (set by service.store.db) or DATABASE_URL."""

import os

from alembic import context
from sqlalchemy import create_engine, text

from service.accounts import models as _accounts  # noqa: F401  (puts users, api_tokens on Base)
from service.store.models import Base

config = context.config
target_metadata = Base.metadata


def _url() -> str:
    url = config.get_main_option("sqlalchemy.url") or os.environ.get("DATABASE_URL", "")
    if url.startswith("postgresql://"):
        url = "postgresql+psycopg://" + url.split("://", 1)[1]
    return url


def include_object(obj, name, type_, reflected, compare_to) -> bool:
    # procrastinate's tables come from its own schema file (revision 0005), not our models
    return not (type_ == "table" and name.startswith("procrastinate_"))


def run_migrations_online() -> None:
    connectable = create_engine(_url())
    with connectable.connect() as connection:
        context.configure(connection=connection, target_metadata=target_metadata,
                          include_object=include_object)
        with context.begin_transaction():
            # two commands starting at once on a new database (a worker and `chaos run`)
            # would both create the version table: one waits here, then finds it current
            connection.execute(text("SELECT pg_advisory_xact_lock(hashtext('faultline "
                                    "migrations'))"))
            context.run_migrations()
    connectable.dispose()


if context.is_offline_mode():
    context.configure(url=_url(), target_metadata=target_metadata, literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()
else:
    run_migrations_online()
