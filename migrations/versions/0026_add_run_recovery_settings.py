"""Add the settings that decided the cluster's recovery, read before the run's fault.

Revision ID: 0026
Revises: 0025
Create Date: 2026-12-03 03:00:00
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0026"
down_revision = "0025"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("runs", sa.Column("recovery_settings", JSONB(), nullable=True))


def downgrade() -> None:
    op.drop_column("runs", "recovery_settings")
