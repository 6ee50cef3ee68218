"""The core's supervisor on plain Python children: the command's own exit status and signal, the
tail of its stderr, limits applied in the child, and its whole tree ended by ``kill()``."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from tilescope.core.sandbox.supervise import Limits, Supervised


def _python(code: str, **kw: object) -> Supervised:
    return Supervised([sys.executable, "-c", code], **kw)  # type: ignore[arg-type]


def test_an_exit_status_and_a_signal_stay_apart() -> None:
    status = _python("import sys; sys.exit(139)")
    assert status.exit_code(timeout=30) == 139
    crash = _python("import os, signal; os.kill(os.getpid(), signal.SIGSEGV)")
    assert crash.exit_code(timeout=30) == -11
    assert crash.wait() == 128 + 11  # the supervisor's own code folds both, hence exit_code


def test_the_stderr_tail_keeps_the_last_lines() -> None:
    child = _python("import sys\nfor i in range(50): print('line', i, file=sys.stderr)", stderr_lines=3)
    assert child.exit_code(timeout=30) == 0
    assert child.stderr_tail() == ["line 47", "line 48", "line 49"]


def test_the_memory_limit_is_applied_in_the_child() -> None:
    code = "import resource, sys; sys.exit(0 if resource.getrlimit(resource.RLIMIT_AS)[0] == 512 << 20 else 1)"
    assert _python(code, limits=Limits(memory_mb=512)).exit_code(timeout=30) == 0
    hog = _python("bytearray(2 << 30)", limits=Limits(memory_mb=512), stderr_lines=5)
    assert hog.exit_code(timeout=30) == 1 and "MemoryError" in hog.stderr_tail()[-1]


def test_kill_ends_the_command_and_what_it_started() -> None:
    code = "import subprocess, time\np = subprocess.Popen(['sleep', '300'])\nprint(p.pid, flush=True)\ntime.sleep(300)"
    child = _python(code)
    assert child.stdout is not None
    grandchild = int(child.stdout.readline())
    child.kill()
    assert child.exit_code(timeout=0) == -9
    for _ in range(100):
        try:
            os.kill(grandchild, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    raise AssertionError("the grandchild outlived kill()")


def test_a_worker_that_cannot_start_is_reported_with_what_it_printed(tmp_path: Path) -> None:
    from tilescope.core.compiler.worker_link import WorkerError, WorkerLink

    python = tmp_path / "python"
    python.write_text("#!/bin/sh\necho 'first words' >&2\necho 'no TileLang in this interpreter' >&2\nexit 1\n")
    python.chmod(0o755)
    link = WorkerLink(str(python), 0)
    try:
        link.wait_ready()
    except WorkerError as err:
        assert err.code == "worker-start" and err.form == "printed", err
        assert err.fields["printed"] == "first words / no TileLang in this interpreter", err.fields
        from tilescope.core.codes import diagnostic
        from tilescope.core.model import Span

        said = diagnostic(err.code, Span(1), form=err.form, fields=err.fields).message
        assert said.endswith("it printed: first words / no TileLang in this interpreter"), said
    else:
        raise AssertionError("a worker that exits at start was taken as ready")
