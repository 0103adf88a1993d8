"""Add a calibration's repeated stages, its knee's spread, and the release and topology it
was made on, so that a knee is read from repeats and is not reused on another cluster shape.

calibration_stages.repeat numbers the measurements of one level (0: the first pass), and
joins the primary key; calibrations.spread holds the knee rule's figures (each repeated
level's throughputs, the best level, the threshold); calibrations.release and .topology
key its reuse (a row without them, made before, is never reused).

Revision ID: 0022
Revises: 0021
Create Date: 2026-11-27 07:45:00
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0022"
down_revision = "0021"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("calibration_stages", sa.Column("repeat", sa.Integer(), nullable=False,
                                                  server_default="0"))
    op.drop_constraint("calibration_stages_pkey", "calibration_stages", type_="primary")
    op.create_primary_key("calibration_stages_pkey", "calibration_stages",
                          ["calibration_id", "in_flight", "repeat"])
    op.add_column("calibrations", sa.Column("spread", JSONB(), nullable=True))
    op.add_column("calibrations", sa.Column("release", sa.String(100), nullable=True))
    op.add_column("calibrations", sa.Column("topology", JSONB(), nullable=True))


def downgrade() -> None:
    op.drop_column("calibrations", "topology")
    op.drop_column("calibrations", "release")
    op.drop_column("calibrations", "spread")
    op.execute("DELETE FROM calibration_stages WHERE repeat > 0")
    op.drop_constraint("calibration_stages_pkey", "calibration_stages", type_="primary")
    op.create_primary_key("calibration_stages_pkey", "calibration_stages",
                          ["calibration_id", "in_flight"])
    op.drop_column("calibration_stages", "repeat")
