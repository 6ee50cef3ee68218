"""Token expiry, one grading in flight per learner, and the lease of the one server that grades.

Tokens issued before this migration get an expiry (0: expired): the teacher issues new ones. A learner
holding several submissions in grading (an older server allowed it) keeps the oldest; the rest go back
to the queue, so that the new unique index can be built.
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("learners", sa.Column("token_expires_at", sa.Float(), nullable=False, server_default=sa.text("0")))
    op.execute(
        "UPDATE submissions SET state = 'queued', claimed_by = NULL WHERE state = 'grading' AND id NOT IN "
        "(SELECT min(id) FROM submissions WHERE state = 'grading' GROUP BY learner_id)"
    )
    op.create_index(
        "uq_submissions_one_grading",
        "submissions",
        ["learner_id"],
        unique=True,
        sqlite_where=sa.text("state = 'grading'"),
        postgresql_where=sa.text("state = 'grading'"),
    )
    op.create_table(
        "server_lease",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("holder", sa.String(120), nullable=True),
        sa.Column("expires_at", sa.Float(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("server_lease")
    op.drop_index("uq_submissions_one_grading", "submissions")
    op.drop_column("learners", "token_expires_at")
