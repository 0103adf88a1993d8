"""Add the owner of a run: the process that runs it (PID, host, and its start, which tells
it from a later process given the same PID) and when it last said it was alive, so that a
run whose process died is found and marked interrupted (service.runs.reaper).

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-25 12:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("runs", sa.Column("owner_pid", sa.Integer(), nullable=True))
    op.add_column("runs", sa.Column("owner_host", sa.String(length=255), nullable=True))
    op.add_column("runs", sa.Column("owner_start", sa.String(length=200), nullable=True))
    op.add_column("runs", sa.Column("owner_seen_at", sa.DateTime(timezone=True),
                                    nullable=True))


def downgrade() -> None:
    for column in ("owner_seen_at", "owner_start", "owner_host", "owner_pid"):
        op.drop_column("runs", column)
