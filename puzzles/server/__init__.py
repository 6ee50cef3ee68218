"""``tilescope puzzles serve``: a grading server for a class that shares a few GPUs.

Submissions arrive over HTTP, wait in a database queue (SQLAlchemy: SQLite or PostgreSQL, the schema
by Alembic), and are graded by Ray actors on the cluster's nodes, each holding a warm sealed grader;
the server process itself only stores, dispatches and draws pages.
"""
