"""Queue runs: procrastinate's job tables, and what a run needs while it waits in the queue.

procrastinate's schema is the SQL file of the installed version (pinned in
pyproject.toml); a later procrastinate release that changes it needs its own
revision here, made from the migrations that procrastinate ships.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-23 14:30:00
"""

import sqlalchemy as sa
from alembic import op
from procrastinate.schema import SchemaManager
from sqlalchemy.dialects import postgresql

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

PROCRASTINATE_TABLES = ["procrastinate_events", "procrastinate_periodic_defers",
                        "procrastinate_jobs", "procrastinate_workers"]
PROCRASTINATE_TYPES = ["procrastinate_job_to_defer_v1", "procrastinate_job_event_type",
                       "procrastinate_job_status"]


def upgrade() -> None:
    # straight to psycopg with no parameters: the file's own '%' stay as they are
    with op.get_bind().connection.dbapi_connection.cursor() as cursor:
        cursor.execute(SchemaManager.get_schema())
    op.add_column("runs", sa.Column("experiment", postgresql.JSONB(astext_type=sa.Text()),
                                    nullable=True))
    op.add_column("runs", sa.Column("inventory", sa.Text(), nullable=True))
    op.add_column("runs", sa.Column("job_id", sa.BigInteger(), nullable=True))
    op.add_column("runs", sa.Column("requested_by", sa.String(length=200), nullable=True))
    op.add_column("runs", sa.Column("queued_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    for column in ("queued_at", "requested_by", "job_id", "inventory", "experiment"):
        op.drop_column("runs", column)
    for table in PROCRASTINATE_TABLES:
        op.execute(f"DROP TABLE IF EXISTS {table} CASCADE")
    op.execute("""
        DO $$ DECLARE f record; BEGIN
          FOR f IN SELECT oid::regprocedure AS sig FROM pg_proc
                   WHERE proname LIKE 'procrastinate\\_%' LOOP
            EXECUTE 'DROP FUNCTION ' || f.sig || ' CASCADE';
          END LOOP;
        END $$""")
    for type_ in PROCRASTINATE_TYPES:
        op.execute(f"DROP TYPE IF EXISTS {type_} CASCADE")
