"""Create calibrations and calibration_stages: closed-loop sweeps of a workload shape on a
cluster, each stage's figures and histogram, and the knee (the cluster's capacity).

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-25 18:00:00
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "calibrations",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("cluster", sa.String(length=200), nullable=False),
        sa.Column("cluster_kind", sa.String(length=20), nullable=False),
        sa.Column("load_api", sa.String(length=20), nullable=False),
        sa.Column("workload", postgresql.JSONB(), nullable=False),
        sa.Column("settings", postgresql.JSONB(), nullable=False),
        sa.Column("status", sa.String(length=20), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), server_default=sa.text("now()"),
                  nullable=False),
        sa.Column("ended_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("stop_reason", sa.Text(), nullable=True),
        sa.Column("knee_in_flight", sa.Integer(), nullable=True),
        sa.Column("capacity_ops", sa.Float(), nullable=True),
        sa.Column("capacity_mbps", sa.Float(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_calibrations_cluster", "calibrations", ["cluster"])
    op.create_table(
        "calibration_stages",
        sa.Column("calibration_id", sa.Integer(), nullable=False),
        sa.Column("in_flight", sa.Integer(), nullable=False),
        sa.Column("seconds", sa.Integer(), nullable=False),
        sa.Column("ops", sa.BigInteger(), nullable=False),
        sa.Column("ops_s", sa.Float(), nullable=False),
        sa.Column("mb_s", sa.Float(), nullable=False),
        sa.Column("errors", sa.Integer(), nullable=False),
        sa.Column("errors_by_class", postgresql.JSONB(), nullable=False),
        sa.Column("p50_ms", sa.Float(), nullable=True),
        sa.Column("p90_ms", sa.Float(), nullable=True),
        sa.Column("p99_ms", sa.Float(), nullable=True),
        sa.Column("p999_ms", sa.Float(), nullable=True),
        sa.Column("histogram", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(["calibration_id"], ["calibrations.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("calibration_id", "in_flight"),
    )


def downgrade() -> None:
    op.drop_table("calibration_stages")
    op.drop_index("ix_calibrations_cluster", table_name="calibrations")
    op.drop_table("calibrations")
