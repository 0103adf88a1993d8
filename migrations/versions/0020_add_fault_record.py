"""Add faults.record: what a fault's injection did (a unit masked, a disk image made, a
cgroup left), written beside the restore's arguments, which from now on say only which fault
to undo, so a restore reads what to undo from the ledger and never from an experiment.

Rows written before keep their record among their arguments; the ledger reads them so
(clusters.safety.fault_ledger.FaultEntry.read), so nothing is moved here. The downgrade merges each
record back into its arguments, as the code before this revision reads them, so a fault
still outstanding can be healed after it.

Revision ID: 0020
Revises: 0019
Create Date: 2026-11-27 03:40:00
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("faults", sa.Column("record", postgresql.JSONB(astext_type=sa.Text()),
                                      server_default=sa.text("'{}'::jsonb"), nullable=False))


def downgrade() -> None:
    op.execute("UPDATE faults SET arguments = arguments || record WHERE record <> '{}'::jsonb")
    op.drop_column("faults", "record")
