"""In the child the zygote forks per request: drop the zygote's channels, answer one request over a
pipe of its own, confirm the answer with the zygote's secret and exit.

Runs in the forked child (``worker.main`` forks it), where user code runs. Whatever user code changes
dies with the child; ``Baseline`` notices what it left running, which voids the answer. The signals
a child may send the zygote (``RECORDED``) and ``dumpable`` are the zygote's too: it records the one
and turns the other off for itself.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import signal
import sys
import threading
import traceback
from typing import Any, BinaryIO, NoReturn, cast

from tilescope.core.protocol import WorkerRequest
from tilescope.core.sandbox import landlock
from tilescope.core.sandbox.frames import (
    CHANNEL_DAMAGED_EXIT,
    channel_damage,
    channel_fingerprint,
    confirmation,
    encode,
    write_all,
)
from tilescope.core.worker import import_path
from tilescope.core.worker.handler import Worker

RECORDED = ("SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGALRM")
"""Signals a child may send its parent, the zygote: recorded and reported, never obeyed."""
_PR_SET_DUMPABLE = 4


def dumpable(on: bool) -> None:
    """Whether processes of the same user may read this one's memory and descriptors (``/proc``, ptrace)."""
    with contextlib.suppress(Exception):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_DUMPABLE, int(on), 0, 0, 0)


class Baseline:
    """What the child looks like before user code runs, to notice what a build left behind."""

    def __init__(self) -> None:
        self.threads = set(sys._current_frames())

    def leftovers(self) -> list[str]:
        """What user code left that could still act: threads still running, trace or profile hooks."""
        found = []
        extra = [t for t in sys._current_frames() if t not in self.threads]
        if extra:
            names = {t.ident: t.name for t in threading.enumerate()}
            listed = ", ".join(names.get(t, f"thread {t}") for t in extra[:4])
            found.append(f"{len(extra)} thread(s) still running ({listed})")
        if sys.gettrace() is not None or sys.getprofile() is not None:
            found.append("a trace or profile hook still set")
        return found


def child(worker: Worker, down: int, up: int, closed: tuple[int, ...]) -> NoReturn:
    """In the forked child: drop the zygote's channels, wait for the request on ``down`` (the child is
    forked ahead of it), answer it over ``up`` and exit; exit at once if the zygote goes first."""
    code = 0
    try:
        for fd in closed:
            os.close(fd)
        dumpable(True)  # the child's own processes stay findable by their tree's token (``supervise``)
        with contextlib.suppress(OSError):
            landlock.apart()  # root ignores "not dumpable": a domain of its own keeps it out of the zygote
        for name in RECORDED:
            signal.signal(getattr(signal, name), signal.SIG_DFL)
        import_path.forked()
        requests = os.fdopen(down, "rb")
        line = requests.readline()
        if line:
            code = _answer(worker, json.loads(line), requests, up)
    except BaseException:  # nothing may return into the zygote's loop
        code = 1
    finally:
        with contextlib.suppress(Exception):
            sys.stderr.flush()
        os._exit(code)


def _answer(worker: Worker, request: dict[str, Any], requests: BinaryIO, up: int) -> int:
    """The old worker's loop body, for one request: answer, then confirm with the zygote's secret."""
    channels = (requests.fileno(), up)
    fingerprint = channel_fingerprint(channels)
    baseline = Baseline()
    ident = request.get("id")

    def on_phase(name: str) -> None:
        with contextlib.suppress(OSError):
            write_all(up, encode(ident, {"phase": name}))

    def on_partial(result: dict[str, Any]) -> None:
        """The analysis so far, sent and confirmed as the answer is, and only while user code has left
        nothing that could have forged it (a thread, a hook, a replaced channel); else only the answer goes."""
        if baseline.leftovers() or channel_damage(channels, fingerprint) is not None:
            return
        frame = encode(ident, {"partial": result})
        with contextlib.suppress(OSError):
            write_all(up, frame)
            secret = requests.readline().decode(errors="replace").strip()
            write_all(up, confirmation(ident, frame, secret))

    try:
        # The service's JSON, not checked field by field here: ``handle`` refuses an unknown ``op``.
        result = worker.handle(cast(WorkerRequest, request), on_phase, on_partial)
        answer = {"id": ident, "ok": True, "result": result}
    except (Exception, SystemExit) as err:  # user code's sys.exit() ends a request with an error
        answer = {
            "id": ident,
            "ok": False,
            "error": f"{type(err).__name__}: {err}",
            "detail": traceback.format_exc()[-4000:],
        }
    damage = channel_damage(channels, fingerprint)
    if damage is not None:
        print(f"tilescope worker: {damage}", file=sys.stderr, flush=True)
        answer["fatal"] = damage
    answer["left"] = baseline.leftovers()
    frame = encode(ident, answer)
    try:
        write_all(up, frame)
    except OSError:
        return CHANNEL_DAMAGED_EXIT
    if damage is not None:
        return CHANNEL_DAMAGED_EXIT
    if not answer["left"]:
        secret = requests.readline().decode(errors="replace").strip()
        try:
            write_all(up, confirmation(ident, frame, secret))
        except OSError:
            return CHANNEL_DAMAGED_EXIT
    return 0
