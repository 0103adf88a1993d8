"""Create the faults table: the fault ledger, so a crashed run's faults can be undone.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-23 10:00:00
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "faults",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("cluster", sa.String(length=200), nullable=False),
        sa.Column("key", sa.String(length=200), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("restore", sa.String(length=200), nullable=False),
        sa.Column("arguments", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("injected_at", sa.Float(), nullable=False),
        sa.Column("owner_pid", sa.Integer(), nullable=False),
        sa.Column("owner_host", sa.String(length=255), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], ondelete="SET NULL"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_faults_cluster_key", "faults", ["cluster", "key"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_faults_cluster_key", table_name="faults")
    op.drop_table("faults")
