"""``tilescope puzzles serve``: open the database (migrating it), join or start the Ray cluster, serve HTTP.

``--add-learner NAME`` only issues a token (printed on the last line) and exits; nothing else starts.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


def default_db() -> str:
    from tilescope.puzzles.progress import data_dir

    folder = data_dir()
    folder.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{Path(folder) / 'grading-server.db'}"


DB_VARIABLE = "TILESCOPE_DB_URL"
"""Where the database URL may come from instead of the command line, which any process of the machine reads."""


def database_url(given: str | None, file: str | None) -> str | None:
    """The URL from ``--db``, else the first line of ``--db-file``, else ``$TILESCOPE_DB_URL``; the variable is
    then taken out of this process's environment, which the Ray cluster it starts would otherwise inherit."""
    from_environment = os.environ.pop(DB_VARIABLE, None)
    if given:
        return given
    if file:
        return Path(file).read_text(encoding="utf-8").splitlines()[0].strip()
    return from_environment or None


def _protect(url: str) -> None:
    """Name a SQLite database's files (and any folder of them) among what no sandboxed process may read; the
    Ray workers that grade inherit it (a server on PostgreSQL keeps its data elsewhere)."""
    from sqlalchemy.engine import make_url
    from tilescope.core.clean_env import PROTECT_VARIABLE

    parsed = make_url(url)
    if not parsed.drivername.startswith("sqlite") or not parsed.database or parsed.database == ":memory:":
        return
    database = str(Path(parsed.database).resolve())
    files = [f"{database}{suffix}" for suffix in ("", "-wal", "-shm", "-journal")]
    known = [p for p in os.environ.get(PROTECT_VARIABLE, "").split(os.pathsep) if p]
    os.environ[PROTECT_VARIABLE] = os.pathsep.join(dict.fromkeys([*known, *files]))


def serve(
    address: str | None,
    db: str | None,
    host: str,
    port: int,
    add_learner: str | None,
    max_bytes: int,
    per_minute: int,
    cpu_slots: int | None,
) -> int:
    from sqlalchemy.engine import make_url
    from tilescope.core.supervise import become_undumpable
    from tilescope.puzzles.server.store import Store

    become_undumpable()  # its memory and environment (the database's password) are its own
    url = db or default_db()
    _protect(url)
    store = Store(url, max_bytes=max_bytes, per_minute=per_minute)
    shown = make_url(store.engine.url).render_as_string(hide_password=True)
    if add_learner is not None:
        try:
            token = store.add_learner(add_learner)
        except ValueError as err:
            print(f"tilescope puzzles serve: {err}", file=sys.stderr)
            return 2
        finally:
            store.close()
        print(f"learner {add_learner.strip()} in {shown}; their token (shown once, give it to them):")
        print(token)
        return 0

    import uvicorn
    from tilescope.puzzles.server.dispatch import Dispatcher
    from tilescope.puzzles.server.web import create_app

    dispatcher = Dispatcher(store, address, cpu_slots=cpu_slots)
    plan = dispatcher.start()
    slots = f"{plan.slots} {plan.kind.upper()} slot{'s' if plan.slots != 1 else ''}"
    how = slots if plan.kind == "gpu" else f"{slots} (no GPU in the cluster: the tile interpreter, untimed)"
    print(f"tilescope puzzles serve: http://{host}:{port} · grading on {how} · {shown}", file=sys.stderr, flush=True)
    app = create_app(store, dispatcher.slots, dispatcher.wake)
    try:
        uvicorn.run(app, host=host, port=port, log_level="warning", access_log=False)
    finally:
        dispatcher.stop()
        store.close()
    return 0
