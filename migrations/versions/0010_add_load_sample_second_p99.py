"""Add load_samples.second_p99_ms: the p99 of a whole second over every op type, merged from
the op types' histograms when the second is stored, so the run page's chart does not merge
thousands of histograms at each view (a 1 h run: 10,800 of them, ~2 s).

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-23 21:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("load_samples", sa.Column("second_p99_ms", sa.Float(), nullable=True))


def downgrade() -> None:
    op.drop_column("load_samples", "second_p99_ms")
