"""``tilescope puzzles serve``: open the database (migrating it), take its lease, join or start the Ray cluster,
serve HTTP.

``--add-learner NAME`` only issues a token (printed on the last line) and exits, as ``--revoke-learner NAME``
only ends one; nothing else starts. A second server on a database whose server is alive exits (status 3),
saying so, before it touches the queue.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tilescope.puzzles.server.store import Store


def default_db() -> str:
    """The database in the user's data folder, both private to the user: it holds every learner's code."""
    from tilescope.puzzles.progress import data_dir

    folder = Path(data_dir())
    if not folder.exists():
        folder.mkdir(mode=0o700, parents=True)
    return f"sqlite:///{folder / 'grading-server.db'}"


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
    grading actors are given it (a server on PostgreSQL keeps its data elsewhere)."""
    from sqlalchemy.engine import make_url
    from tilescope.core.sandbox.clean_env import protect

    parsed = make_url(url)
    if not parsed.drivername.startswith("sqlite") or not parsed.database or parsed.database == ":memory:":
        return
    database = str(Path(parsed.database).resolve())
    files = [f"{database}{suffix}" for suffix in ("", "-wal", "-shm", "-journal")]
    protect(files)


def serve(
    address: str | None,
    db: str | None,
    host: str,
    port: int,
    add_learner: str | None,
    max_bytes: int,
    per_minute: int,
    cpu_slots: int | None,
    revoke_learner: str | None = None,
    token_days: float = 120.0,
    budget_s: float = 600.0,
) -> int:
    """The command's exit status: a learner's token issued or revoked, else the server run to its end."""
    from sqlalchemy.engine import make_url
    from tilescope.core.sandbox.supervise import become_undumpable
    from tilescope.puzzles.server.store import Store

    become_undumpable()  # its memory and environment (the database's password) are its own
    url = db or default_db()
    _protect(url)
    store = Store(url, max_bytes=max_bytes, per_minute=per_minute, budget_s=budget_s)
    shown = make_url(store.engine.url).render_as_string(hide_password=True)
    if revoke_learner is not None:
        return _revoke(store, shown, revoke_learner)
    if add_learner is not None:
        return _add(store, shown, add_learner, token_days)
    return _run(store, shown, address, host, port, cpu_slots)


def _revoke(store: Store, shown: str, name: str) -> int:
    try:
        revoked = store.revoke_learner(name)
    finally:
        store.close()
    if not revoked:
        print(f"tilescope puzzles serve: no learner {name.strip()!r} in {shown}", file=sys.stderr)
        return 2
    print(f"learner {name.strip()}'s token no longer works in {shown}")
    return 0


def _add(store: Store, shown: str, name: str, token_days: float) -> int:
    from tilescope.puzzles.server.admission import LimitError

    try:
        token = store.add_learner(name, token_days)
    except (ValueError, LimitError) as err:
        print(f"tilescope puzzles serve: {err}", file=sys.stderr)
        return 2
    finally:
        store.close()
    print(f"learner {name.strip()} in {shown}, for {token_days:g} days; their token (shown once):")
    print(token)
    return 0


def _run(store: Store, shown: str, address: str | None, host: str, port: int, cpu_slots: int | None) -> int:
    """Take the database's lease, start grading on the cluster and serve HTTP until stopped (0) or until the
    lease is lost (4); another live server holding the lease: 3."""
    import uvicorn
    from tilescope.puzzles.server.dispatch import Dispatcher
    from tilescope.puzzles.server.lease import Lease, LeaseHeld, holder_name
    from tilescope.puzzles.server.web import create_app

    dispatcher = Dispatcher(store, address, cpu_slots=cpu_slots)
    app = create_app(store, dispatcher.slots, dispatcher.wake)
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning", access_log=False))
    lost: list[bool] = []

    def on_lost() -> None:
        print("tilescope puzzles serve: this server lost its database lease; it stops grading", file=sys.stderr)
        lost.append(True)
        dispatcher.stopping.set()
        server.should_exit = True

    lease = Lease(store, holder_name(), on_lost=on_lost)
    try:
        lease.acquire()
    except LeaseHeld as err:
        print(f"tilescope puzzles serve: {err}", file=sys.stderr)
        store.close()
        return 3
    try:
        plan = dispatcher.start()
        slots = f"{plan.slots} {plan.kind.upper()} slot{'s' if plan.slots != 1 else ''}"
        how = slots if plan.kind == "gpu" else f"{slots} (no GPU in the cluster: the tile interpreter, untimed)"
        where = f"http://{host}:{port} · grading on {how} · {shown}"
        print(f"tilescope puzzles serve: {where}", file=sys.stderr, flush=True)
        server.run()
    finally:
        dispatcher.stop()
        if not lost:
            lease.release()
        store.close()
    return 4 if lost else 0
