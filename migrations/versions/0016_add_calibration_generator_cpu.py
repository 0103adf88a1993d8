"""Add the load generator's CPU to each calibration stage, and whether a calibration's knee
was measured with a busy generator (its capacity is then a lower bound).

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-25 21:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("calibration_stages",
                  sa.Column("generator_cpu_cores", sa.Float(), nullable=True))
    op.add_column("calibrations", sa.Column("generator_bound", sa.Boolean(), nullable=True))


def downgrade() -> None:
    op.drop_column("calibrations", "generator_bound")
    op.drop_column("calibration_stages", "generator_cpu_cores")
