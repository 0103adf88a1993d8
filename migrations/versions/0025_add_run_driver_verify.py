"""Add each load driver's own verify of its share, with its consistency checker's classes.

Revision ID: 0025
Revises: 0024
Create Date: 2026-12-02 16:10:00
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0025"
down_revision = "0024"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("run_drivers", sa.Column("verify_at", sa.Float(), nullable=True))
    op.add_column("run_drivers", sa.Column("verify", JSONB(), nullable=True))


def downgrade() -> None:
    op.drop_column("run_drivers", "verify")
    op.drop_column("run_drivers", "verify_at")
