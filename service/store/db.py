"""Database access: the URL (DATABASE_URL or the embedded server), engine, sessions, migrations."""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import Engine, create_engine
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session, sessionmaker

from . import pgserver

MIGRATIONS = Path(__file__).resolve().parents[2] / "migrations"


def database_url() -> str:
    """DATABASE_URL if set (postgresql:// is taken as psycopg 3), else the embedded server."""
    env = os.environ.get("DATABASE_URL")
    if env:
        if env.startswith("postgresql://") or env.startswith("postgres://"):
            env = "postgresql+psycopg://" + env.split("://", 1)[1]
        return env
    pgserver.ensure_running()
    pgserver.ensure_database("faultline")
    return pgserver.url("faultline")


def libpq_url(url: str) -> str:
    """A libpq URI (for psycopg and procrastinate) from a SQLAlchemy URL."""
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


def alembic_config(url: str) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


def migrate(url: str) -> None:
    command.upgrade(alembic_config(url), "head")


@cache
def engine(url: str | None = None) -> Engine:
    url = url or database_url()
    migrate(url)
    return create_engine(url, pool_pre_ping=True)


def session_factory(url: str | None = None) -> sessionmaker[Session]:
    return sessionmaker(engine(url), expire_on_commit=False)
