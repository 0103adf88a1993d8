"""Add runs.guard_override_by: the admin who let a run override the blast-radius guard
(allow_unavailable, baseline.on_invalid inject-anyway), so the run's report says who did.

Revision ID: 0021
Revises: 0020
Create Date: 2026-11-27 03:40:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("runs", sa.Column("guard_override_by", sa.String(200), nullable=True))


def downgrade() -> None:
    op.drop_column("runs", "guard_override_by")
