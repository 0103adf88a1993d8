"""Create schedules and their enqueued slots, and tie scheduled runs to their schedule.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-23 14:40:00
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "schedules",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("cron", sa.String(length=200), nullable=False),
        sa.Column("timezone", sa.String(length=100), nullable=False),
        sa.Column("experiment_path", sa.Text(), nullable=True),
        sa.Column("suite_path", sa.Text(), nullable=True),
        sa.Column("clusters", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("workload", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("created_by", sa.String(length=200), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"),
                  nullable=False),
        sa.Column("checked_until", sa.DateTime(timezone=True),
                  server_default=sa.text("now()"), nullable=False),
        sa.CheckConstraint("(experiment_path IS NULL) <> (suite_path IS NULL)",
                           name="ck_schedules_experiment_or_suite"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("name"),
    )
    op.create_table(
        "schedule_slots",
        sa.Column("schedule_id", sa.Integer(), nullable=False),
        sa.Column("slot", sa.DateTime(timezone=True), nullable=False),
        sa.Column("run_ids", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("enqueued_at", sa.DateTime(timezone=True), server_default=sa.text("now()"),
                  nullable=False),
        sa.ForeignKeyConstraint(["schedule_id"], ["schedules.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("schedule_id", "slot"),
    )
    op.add_column("runs", sa.Column("schedule_id", sa.Integer(), nullable=True))
    op.add_column("runs", sa.Column("verdict", postgresql.JSONB(astext_type=sa.Text()),
                                    nullable=True))
    op.create_index("ix_runs_schedule_id", "runs", ["schedule_id"])
    op.create_foreign_key("fk_runs_schedule_id", "runs", "schedules", ["schedule_id"], ["id"],
                          ondelete="SET NULL")


def downgrade() -> None:
    op.drop_constraint("fk_runs_schedule_id", "runs", type_="foreignkey")
    op.drop_index("ix_runs_schedule_id", table_name="runs")
    op.drop_column("runs", "verdict")
    op.drop_column("runs", "schedule_id")
    op.drop_table("schedule_slots")
    op.drop_table("schedules")
