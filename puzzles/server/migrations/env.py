"""Alembic's entry: migrate the connection that ``db.migrate`` hands over (there is no alembic.ini)."""

from alembic import context
from tilescope.puzzles.server.db import Base

context.configure(connection=context.config.attributes["connection"], target_metadata=Base.metadata)
with context.begin_transaction():
    context.run_migrations()
