"""Create run_drivers: the load drivers of a run that runs on several hosts, each a job of
the `load` queue, and what they agreed on (the start and stop times).

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-23 21:20:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "run_drivers",
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("index", sa.Integer(), nullable=False),
        sa.Column("state", sa.String(length=20), nullable=False),
        sa.Column("host", sa.String(length=255), nullable=True),
        sa.Column("pid", sa.Integer(), nullable=True),
        sa.Column("start_at", sa.Float(), nullable=True),
        sa.Column("stop_at", sa.Float(), nullable=True),
        sa.Column("prefilled", sa.Integer(), nullable=False),
        sa.Column("ops", sa.BigInteger(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), server_default=sa.text("now()"),
                  nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("run_id", "index"),
    )


def downgrade() -> None:
    op.drop_table("run_drivers")
