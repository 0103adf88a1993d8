"""Add the version of each acknowledged object: an overwrite writes the object's next one.

Revision ID: 0024
Revises: 0023
Create Date: 2026-12-02 12:30:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0024"
down_revision = "0023"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("ledger_entries", sa.Column("version", sa.Integer(), nullable=False,
                                              server_default="0"))


def downgrade() -> None:
    op.drop_column("ledger_entries", "version")
