"""Add a run's trial group: one of N repeats of an experiment (`faultline run --trials N`),
compared as a group with its spread.

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-25 19:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("runs", sa.Column("trial_group", sa.String(length=32), nullable=True))
    op.add_column("runs", sa.Column("trial_index", sa.Integer(), nullable=True))
    op.add_column("runs", sa.Column("trials", sa.Integer(), nullable=True))
    op.create_index("ix_runs_trial_group", "runs", ["trial_group"])


def downgrade() -> None:
    op.drop_index("ix_runs_trial_group", table_name="runs")
    for column in ("trials", "trial_index", "trial_group"):
        op.drop_column("runs", column)
