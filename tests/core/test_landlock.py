"""The core's Landlock sandbox, applied by the supervisor between fork and exec: a sealed child reads
only what it was granted, writes only in its own folder, and cannot read its parent's memory."""

from __future__ import annotations

import os
import shutil
import socket
import sys
import tempfile
from pathlib import Path

import pytest
from tilescope.core.sandbox import landlock
from tilescope.core.sandbox.private_files import private_prefix
from tilescope.core.sandbox.supervise import Limits, Supervised

from tests.conftest import Listener

pytestmark = pytest.mark.skipif(landlock.abi() < 1, reason="this kernel offers no Landlock")

PROBE = """
import os, sys
def attempt(what, fn):
    try:
        fn()
        print(what, "ok")
    except OSError as err:
        print(what, "denied", err.errno)
secret, private, outside = sys.argv[1:4]
attempt("read-secret", lambda: open(secret).read())
attempt("write-secret", lambda: open(secret, "a").write("x"))
attempt("write-private", lambda: open(os.path.join(private, "f"), "w").write("x"))
attempt("write-outside", lambda: open(outside, "w").write("x"))
attempt("read-parent-memory", lambda: open(f"/proc/{os.getppid()}/mem", "rb").read(1))
"""


def test_a_sealed_child_touches_only_what_it_was_granted(tmp_path: Path) -> None:
    secret_dir, private = tmp_path / "content", tmp_path / "private"
    secret_dir.mkdir()
    private.mkdir()
    secret = secret_dir / "reference.py"
    secret.write_text("SECRET = 1\n")
    outside = tmp_path / "elsewhere.txt"
    sandbox = landlock.sealing([str(secret_dir)], [str(private)])
    child = Supervised(
        [sys.executable, "-c", PROBE, str(secret), str(private), str(outside)],
        limits=Limits(sandbox=sandbox),
        stdin=None,
    )
    assert child.stdout is not None
    lines = dict(line.decode().split(" ", 1) for line in child.stdout.read().splitlines())
    assert child.exit_code(timeout=30) == 0
    assert {k: v.split()[0] for k, v in lines.items()} == {
        "read-secret": "denied",
        "write-secret": "denied",
        "write-private": "ok",
        "write-outside": "denied",
        "read-parent-memory": "denied",
    }
    assert secret.read_text() == "SECRET = 1\n" and not outside.exists()


def test_sealing_grants_listing_above_a_denied_path_and_reading_beside_it(tmp_path: Path) -> None:
    (tmp_path / "deny").mkdir()
    (tmp_path / "keep").mkdir()
    sandbox = landlock.sealing([str(tmp_path / "deny")])
    assert str(tmp_path) in sandbox.list_only and str(tmp_path / "keep") in sandbox.read
    assert not any(p.startswith(str(tmp_path / "deny")) for p in (*sandbox.read, *sandbox.list_only))
    assert landlock.Sandbox.from_json(sandbox.to_json()) == sandbox


OTHERS = """
import os, socket, sys
def attempt(what, fn):
    try:
        fn()
        print(what, "ok")
    except OSError as err:
        print(what, "denied", err.errno)
caller, port, abstract = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
attempt("caller-environ", lambda: open(f"/proc/{caller}/environ", "rb").read())
attempt("caller-cmdline", lambda: open(f"/proc/{caller}/cmdline", "rb").read())
attempt("own-status", lambda: open("/proc/self/status", "rb").read())
attempt("tcp-connect", lambda: socket.create_connection(("127.0.0.1", port), timeout=3).sendall(b"leak"))
attempt("tcp-bind", lambda: socket.create_server(("127.0.0.1", 0)))
def unix():
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(b"\\0" + abstract.encode())
        s.sendall(b"leak")
attempt("abstract-unix", unix)
for name, denied in zip(("list-denied", "list-later"), sys.argv[4:6]):
    try:
        names = os.listdir(denied)
    except OSError:
        names = []
    print(name, "ok" if names else "denied")
attempt("read-later", lambda: open(os.path.join(sys.argv[5], "17.py")).read())
"""


def _others(limits: Limits, port: int, abstract: str, denied: Path, later: Path) -> dict[str, str]:
    argv = [sys.executable, "-c", OTHERS, str(os.getpid()), str(port), abstract, str(denied), str(later)]
    child = Supervised(argv, limits=limits, stdin=None)
    assert child.stdout is not None
    lines = dict(line.decode().split(" ", 1) for line in child.stdout.read().splitlines())
    assert child.exit_code(timeout=30) == 0
    return {k: v.split()[0] for k, v in lines.items()}


def test_a_sealed_child_reads_no_other_process_and_reaches_no_socket(tmp_path: Path, listener: Listener) -> None:
    """Landlock alone (no network namespace asked for): other processes' ``/proc`` entries, which hold a
    server's environment and command line, a TCP listener on loopback, an abstract unix socket, the names in
    a denied folder (another grading's submissions), which Landlock alone would let it list, and a private
    folder made in the temporary folder after it was sealed (the next grading's)."""
    abstract = f"tilescope-test-{os.getpid()}"
    others, private = tmp_path / "tilescope-grading-other", tmp_path / "private"
    (others / "17").mkdir(parents=True)
    private.mkdir()
    sandbox = landlock.sealing([str(others)], [str(private)])
    later = Path(tempfile.mkdtemp(prefix=private_prefix("grading")))
    (later / "17.py").write_text("SECRET = 1\n")
    with socket.socket(socket.AF_UNIX) as unix:
        unix.bind(b"\0" + abstract.encode())
        unix.listen()
        unix.settimeout(0.1)
        try:
            found = _others(Limits(sandbox=sandbox), listener.port, abstract, others, later)
        finally:
            shutil.rmtree(later)
        with pytest.raises(TimeoutError):
            unix.accept()
    assert found == {
        "caller-environ": "denied",
        "caller-cmdline": "denied",
        "own-status": "ok",
        "tcp-connect": "denied",
        "tcp-bind": "denied",
        "abstract-unix": "denied",
        "list-denied": "denied",
        "list-later": "denied",
        "read-later": "denied",
    }
    assert listener.received == []


@pytest.mark.skipif(not landlock.network_can_be_cut(), reason="no way to cut the network here")
def test_an_offline_child_reaches_no_listener_but_keeps_its_files(tmp_path: Path, listener: Listener) -> None:
    abstract = f"tilescope-test-offline-{os.getpid()}"
    with socket.socket(socket.AF_UNIX) as unix:
        unix.bind(b"\0" + abstract.encode())
        unix.listen()
        unix.settimeout(0.1)
        found = _others(Limits(offline=True), listener.port, abstract, tmp_path / "none", tmp_path / "none")
        with pytest.raises(TimeoutError):
            unix.accept()
    assert (found["tcp-connect"], found["tcp-bind"], found["abstract-unix"]) == ("denied", "denied", "denied")
    assert found["own-status"] == "ok"
    assert listener.received == []


def test_a_confined_child_writes_only_its_own_folder_and_signals_no_one_outside(tmp_path: Path) -> None:
    own, other = tmp_path / "check-2", tmp_path / "check-1"
    own.mkdir()
    other.mkdir()
    pid = os.fork()
    if pid == 0:  # the child of a warm parent, as ``loader_zygote`` forks it
        code = 0
        try:
            landlock.confine(str(own))
            (own / "mine.txt").write_text("x")
            with open(os.devnull, "w") as null:
                null.write("x")
            (own / "mine.txt").read_text()
            (other / "trace.txt").exists()  # reading is as it was
            for path in (other / "trace.txt", tmp_path / "trace.txt"):
                try:
                    path.write_text("x")
                    code |= 1
                except PermissionError:
                    pass
            if landlock.abi() >= 6:
                try:
                    os.kill(os.getppid(), 0)
                    code |= 2
                except PermissionError:
                    pass
        except BaseException:
            code |= 4
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, f"exit status {status}: 1 wrote outside, 2 signalled"
    assert not (other / "trace.txt").exists() and not (tmp_path / "trace.txt").exists()
