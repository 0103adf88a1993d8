"""Add runs.metrics_url: where the run's load driver serves its Prometheus metrics while
the run goes on (the service's HTTP service discovery lists it).

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-23 18:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("runs", sa.Column("metrics_url", sa.Text(), nullable=True))


def downgrade() -> None:
    op.drop_column("runs", "metrics_url")
