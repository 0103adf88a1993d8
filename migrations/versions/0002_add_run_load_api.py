"""Add the load API (rados, swift) a run's steady load went through.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22 14:20:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("runs", sa.Column("load_api", sa.String(length=20), nullable=True))


def downgrade() -> None:
    op.drop_column("runs", "load_api")
