"""Create login_sessions and login_failures, and add api_tokens.expires_at: dashboard
sessions kept on the server (revocable, with an idle and an absolute lifetime), failed logins
counted in the database so every web process throttles alike, and tokens that expire.

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-27 03:31:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "login_sessions",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"),
                  nullable=False),
        sa.Column("last_seen_at", sa.DateTime(timezone=True),
                  server_default=sa.text("now()"), nullable=False),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("address", sa.String(length=64), nullable=True),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(op.f("ix_login_sessions_user_id"), "login_sessions", ["user_id"],
                    unique=False)
    op.create_table(
        "login_failures",
        sa.Column("id", sa.BigInteger(), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), server_default=sa.text("now()"),
                  nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("address", sa.String(length=64), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(op.f("ix_login_failures_at"), "login_failures", ["at"], unique=False)
    op.create_index(op.f("ix_login_failures_name"), "login_failures", ["name"], unique=False)
    op.create_index(op.f("ix_login_failures_address"), "login_failures", ["address"],
                    unique=False)
    op.add_column("api_tokens", sa.Column("expires_at", sa.DateTime(timezone=True),
                                          nullable=True))


def downgrade() -> None:
    op.drop_column("api_tokens", "expires_at")
    op.drop_index(op.f("ix_login_failures_address"), table_name="login_failures")
    op.drop_index(op.f("ix_login_failures_name"), table_name="login_failures")
    op.drop_index(op.f("ix_login_failures_at"), table_name="login_failures")
    op.drop_table("login_failures")
    op.drop_index(op.f("ix_login_sessions_user_id"), table_name="login_sessions")
    op.drop_table("login_sessions")
