"""Learners, their submissions (the queue) and one verdict per submission."""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "learners",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("name", sa.String(64), nullable=False, unique=True),
        sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("created_at", sa.Float(), nullable=False),
    )
    op.create_table(
        "submissions",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("learner_id", sa.Integer(), sa.ForeignKey("learners.id"), nullable=False),
        sa.Column("puzzle", sa.String(16), nullable=False),
        sa.Column("filename", sa.String(200), nullable=False),
        sa.Column("source", sa.Text(), nullable=False),
        sa.Column("client_key", sa.String(64), nullable=True),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("first_claimed_at", sa.Float(), nullable=True),
        sa.Column("claimed_at", sa.Float(), nullable=True),
        sa.Column("claimed_by", sa.String(120), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.UniqueConstraint("learner_id", "client_key", name="uq_submissions_client_key"),
    )
    for column in ("learner_id", "puzzle", "sha256", "state", "created_at"):
        op.create_index(f"ix_submissions_{column}", "submissions", [column])
    op.create_table(
        "verdicts",
        sa.Column("submission_id", sa.Integer(), sa.ForeignKey("submissions.id"), primary_key=True),
        sa.Column("passed", sa.Boolean(), nullable=False),
        sa.Column("failure", sa.String(32), nullable=True),
        sa.Column("summary", sa.Text(), nullable=False),
        sa.Column("device", sa.String(16), nullable=False),
        sa.Column("time_us", sa.Float(), nullable=True),
        sa.Column("torch_us", sa.Float(), nullable=True),
        sa.Column("stars", sa.Integer(), nullable=False),
        sa.Column("report", sa.Text(), nullable=False),
        sa.Column("node", sa.String(120), nullable=True),
        sa.Column("grading_s", sa.Float(), nullable=True),
        sa.Column("reference_copy", sa.Boolean(), nullable=False),
        sa.Column("reused_from", sa.Integer(), nullable=True),
        sa.Column("graded_at", sa.Float(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("verdicts")
    op.drop_table("submissions")
    op.drop_table("learners")
