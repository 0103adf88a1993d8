"""Add load_samples.second_p50_ms: the median of a whole second over every op type, merged
with its p99 when the second is stored, so the run page draws its p50-p99 latency band
without merging every histogram of the run at each view.

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-25 23:55:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("load_samples", sa.Column("second_p50_ms", sa.Float(), nullable=True))


def downgrade() -> None:
    op.drop_column("load_samples", "second_p50_ms")
