"""Add runs.objects_removed: when `faultline clean` deleted the objects a run acknowledged,
and what it found (deleted, already gone, failed), so that a later verify does not report
those objects as lost.

Revision ID: 0023
Revises: 0022
Create Date: 2026-11-27 22:00:00
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0023"
down_revision = "0022"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("runs", sa.Column("objects_removed", JSONB(), nullable=True))


def downgrade() -> None:
    op.drop_column("runs", "objects_removed")
