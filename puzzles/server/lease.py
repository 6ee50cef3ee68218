"""The lease that makes one server at a time the grader of a database.

A server takes the lease before it queues again what a previous server was grading, and renews it
while it runs; a second server on the same database finds it renewed, says who holds it, and does
not start, so it never takes a live server's gradings. A server killed outright stops renewing: once
its lease has lapsed (``TTL_S``) the next server takes it over and queues that server's gradings
again; on the same host, a holder whose process is gone is known dead at once, so a restart after a
crash does not wait. A server that cannot renew in time (a stalled process, a lost database) has lost the lease and
must stop grading: another may hold it by then.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError, SQLAlchemyError
from tilescope.puzzles.server.db import ServerLease
from tilescope.puzzles.server.store import Store
from tilescope.puzzles.server.transactions import rowcount

TTL_S = 15.0
RENEW_S = 3.0
POLL_S = 0.5
_ROW = 1
"""The lease is one row: a database has one grader."""


def holder_name() -> str:
    """This process as a lease names its holder: ``host:pid``."""
    return f"{socket.gethostname()}:{os.getpid()}"


def _gone(holder: str) -> bool:
    """Whether ``holder`` (``host:pid``) is a process of this host that no longer exists. A live process, one of
    another host, or a pid taken since by another process all read as not gone: the lease is then watched."""
    host, _, pid = holder.rpartition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except OSError:  # it exists, as another user's process
        return False
    return False


class LeaseHeld(Exception):
    """Another server holds the lease and renews it: this one must not start."""


@dataclass(frozen=True)
class Seen:
    holder: str | None
    expires_at: float


class Lease:
    def __init__(
        self,
        store: Store,
        holder: str,
        *,
        ttl_s: float = TTL_S,
        renew_s: float = RENEW_S,
        on_lost: Callable[[], None] = lambda: None,
    ) -> None:
        self.store = store
        self.holder = holder
        self.ttl_s = ttl_s
        self.renew_s = renew_s
        self.on_lost = on_lost
        self.stopping = threading.Event()
        self.thread: threading.Thread | None = None

    def acquire(self) -> None:
        """Take the lease and keep renewing it; ``LeaseHeld`` when another server renews it. A lease held by no one
        is taken at once; one held by another is watched until it lapses (its holder is dead) or is renewed (its
        holder is alive), at least two renewal periods and at most one lease and two periods."""
        seen = self._read()
        if seen is None and self._insert():
            return self._start()
        seen = self._read()
        assert seen is not None  # the row exists: it was there, or another server inserted it just now
        if seen.holder is not None and seen.holder != self.holder and not _gone(seen.holder):
            now = time.time()
            deadline = min(max(seen.expires_at, now + 2 * self.renew_s), now + self.ttl_s + 2 * self.renew_s)
            while time.time() < deadline:
                time.sleep(POLL_S)
                now_seen = self._read()
                if now_seen != seen:
                    who = now_seen.holder if now_seen is not None else seen.holder
                    raise LeaseHeld(
                        f"another server ({who}) grades from this database and renews its lease; stop it first, "
                        "or give this one another --db"
                    )
        if not self._swap(seen):
            raise LeaseHeld("another server took this database's lease at the same moment; stop it first")
        return self._start()

    def release(self) -> None:
        """Stop renewing and give the lease up, so that the next server starts at once (a stop must not fail on it)."""
        self.stopping.set()
        if self.thread is not None:
            self.thread.join(self.renew_s + 30.0)
        try:
            with self.store.writing() as s, s.begin():
                s.execute(
                    update(ServerLease)
                    .where(ServerLease.id == _ROW, ServerLease.holder == self.holder)
                    .values(holder=None, expires_at=0.0)
                )
        except SQLAlchemyError:  # the database is away: the lease lapses by itself, as a killed server's does
            pass

    def _start(self) -> None:
        self.thread = threading.Thread(target=self._renew, name="server-lease", daemon=True)
        self.thread.start()

    def _renew(self) -> None:
        held_until = time.time() + self.ttl_s
        while not self.stopping.wait(self.renew_s):
            until = time.time() + self.ttl_s
            try:
                with self.store.writing() as s, s.begin():
                    renewed = s.execute(
                        update(ServerLease)
                        .where(ServerLease.id == _ROW, ServerLease.holder == self.holder)
                        .values(expires_at=until)
                    )
                still = bool(rowcount(renewed))
            except SQLAlchemyError:  # the database is away for a moment: the lease holds until it lapses
                still = time.time() < held_until
            else:
                if still:
                    held_until = until
            if not still:
                self.on_lost()
                return

    def _read(self) -> Seen | None:
        with self.store.session() as s:
            row = s.execute(select(ServerLease.holder, ServerLease.expires_at).where(ServerLease.id == _ROW)).first()
        return None if row is None else Seen(row[0], row[1])

    def _insert(self) -> bool:
        try:
            with self.store.writing() as s, s.begin():
                s.add(ServerLease(id=_ROW, holder=self.holder, expires_at=time.time() + self.ttl_s))
        except IntegrityError:
            return False
        return True

    def _swap(self, seen: Seen) -> bool:
        """Take the lease if it is still as ``seen``: of two servers taking it at once, one wins."""
        with self.store.writing() as s, s.begin():
            taken = s.execute(
                update(ServerLease)
                .where(
                    ServerLease.id == _ROW,
                    ServerLease.holder.is_(None) if seen.holder is None else ServerLease.holder == seen.holder,
                    ServerLease.expires_at == seen.expires_at,
                )
                .values(holder=self.holder, expires_at=time.time() + self.ttl_s)
            )
            return bool(rowcount(taken))
