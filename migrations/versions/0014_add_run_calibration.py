"""Add the rate a run asked for as a share of the capacity ("50%") and the calibration it
resolved from (the run's workload keeps the absolute rate).

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-25 18:30:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("runs", sa.Column("rate_requested", sa.String(length=20), nullable=True))
    op.add_column("runs", sa.Column("calibration_id", sa.Integer(), nullable=True))
    op.create_foreign_key("runs_calibration_id_fkey", "runs", "calibrations",
                          ["calibration_id"], ["id"], ondelete="SET NULL")


def downgrade() -> None:
    op.drop_constraint("runs_calibration_id_fkey", "runs", type_="foreignkey")
    op.drop_column("runs", "calibration_id")
    op.drop_column("runs", "rate_requested")
