"""Shared fixtures: one warm compiler worker for the whole session, and the bundled examples."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from tilescope.core.compiler.service import Analyzer

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
STEALS_SECRETS = ROOT / "tests" / "puzzles" / "fixtures" / "steals_secrets.py"


def armed(target: dict[str, object], path: Path) -> Path:
    """A copy at ``path`` of the held-out file that goes for secrets and the network, aimed at ``target`` (its
    ``TARGET``: what to look for, where, and the listener's port). Written into the file, since the environment
    that could carry it is what the tests check."""
    text = STEALS_SECRETS.read_text().replace("TARGET: dict = {}", f"TARGET: dict = {target!r}", 1)
    path.write_text(text)
    return path


def free_port() -> int:
    """A TCP port on loopback that nothing listens on now (for a server a test starts)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Listener:
    """A real TCP listener on loopback, for code that must reach no network: it records every connection made
    to it and what was sent."""

    def __init__(self) -> None:
        self.socket = socket.create_server(("127.0.0.1", 0))
        self.port = int(self.socket.getsockname()[1])
        self.received: list[bytes] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.socket.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(5)
                data = b""
                try:
                    while chunk := conn.recv(65536):
                        data += chunk
                except OSError:
                    pass
                self.received.append(data or b"(connected)")

    def close(self) -> None:
        self.socket.close()


@pytest.fixture
def listener() -> Iterator[Listener]:
    server = Listener()
    yield server
    server.close()


TOP_LEVEL_FOREVER = ROOT / "tests" / "core" / "fixtures" / "top_level_forever.py"
"""A module whose top level never finishes loading, for the tests of ``--timeout`` as the user's clock."""


CPU_GROUPS = Path("/sys/fs/cgroup/cpu")
"""cgroup v1's CPU controller, where a group's quota caps the CPU its processes get (root may make one)."""


@contextlib.contextmanager
def starved(share: float) -> Iterator[None]:
    """For as long as the block runs, every process this test process started (its whole tree: a command, a
    server and their workers) gets at most ``share`` of one CPU, as on a machine whose cores other work keeps
    busy: they are moved into a CPU cgroup with that quota, so a process caught mid-start takes about
    ``1 / share`` times as long and a CPU-time limit would be stretched as much. Unlike processes spinning on
    the cores, this burns no CPU and slows no test running beside it. Where no such group can be made (not
    root, no cgroup v1 CPU controller), both cores are kept busy instead (:func:`busy_cores`)."""
    if share >= 1:
        yield
        return
    group = _cpu_group(share)
    if group is None:
        with busy_cores(2):
            yield
        return
    done = threading.Event()

    def hold() -> None:  # the tree grows as the block runs: a new process is moved within 50 ms
        while not done.is_set():
            _move(_descendants(), group)
            done.wait(0.05)

    thread = threading.Thread(target=hold, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
        for _ in range(50):  # back to the group this process is in; the empty group is then removed
            _move(_group_members(group), CPU_GROUPS / _own_cpu_group())
            with contextlib.suppress(OSError):
                group.rmdir()
                break
            time.sleep(0.1)


def _cpu_group(share: float) -> Path | None:
    """A fresh CPU cgroup whose processes get ``share`` of one CPU, or None where none can be made."""
    group = CPU_GROUPS / _own_cpu_group() / f"tilescope-test-{os.getpid()}-{threading.get_ident()}"
    period_us = 100_000
    try:
        group.mkdir()
    except OSError:
        return None
    try:
        (group / "cpu.cfs_period_us").write_text(str(period_us))
        (group / "cpu.cfs_quota_us").write_text(str(int(period_us * share)))
    except OSError:  # a group without a quota to set: of no use
        group.rmdir()
        return None
    return group


def _own_cpu_group() -> str:
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        if "cpu" in controllers.split(","):
            return path.lstrip("/")
    return ""


def _group_members(group: Path) -> list[int]:
    with contextlib.suppress(OSError):
        return [int(pid) for pid in (group / "cgroup.procs").read_text().split()]
    return []


def _move(pids: list[int], group: Path) -> None:
    for pid in pids:
        with contextlib.suppress(OSError):  # gone since it was listed
            (group / "cgroup.procs").write_text(str(pid))


@contextlib.contextmanager
def busy_cores(count: int) -> Iterator[None]:
    """``count`` processes spinning on the CPU for as long as the block runs: a machine as busy as a shared one."""
    spinners = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"], stdin=subprocess.DEVNULL) for _ in range(count)
    ]
    try:
        yield
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()


def _descendants() -> list[int]:
    """The processes below this one (children, theirs, ...), read from ``/proc``."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path("/proc", entry, "stat").read_text()
            except OSError:
                continue  # gone since the listing
            children.setdefault(int(stat.rsplit(")", 1)[1].split()[1]), []).append(int(entry))
    found: list[int] = []
    todo = [os.getpid()]
    while todo:
        below = children.get(todo.pop(), [])
        found += below
        todo += below
    return found


def _has_cuda() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


HEAVIEST_FIRST = (
    "tests/puzzles/test_cpu_every_puzzle.py",
    "tests/mcp/test_server.py",
    "tests/hazards/test_barriers.py",
    "tests/static/test_incremental.py",
    "tests/interpret/test_puzzles.py",
    "tests/puzzles/server/test_http.py",
    "tests/test_imports.py",
    "tests/core/test_variants.py",
    "tests/puzzles/server/test_hostile.py",
    "tests/core/test_cluster.py",
    "tests/core/test_dry_run.py",
    "tests/lsp/test_hostile_kernels.py",
    "tests/visualizer/test_trace_app.py",
    "tests/core/test_fake_device.py",
    "tests/visualizer/test_cli.py",
    "tests/puzzles/test_sealed.py",
)
"""The test files that take longest (test-seconds, measured with ``--durations=0``: 455 s down to 79 s of the
suite's 4,078 s on 2026-12-05, two workers on this 2-core machine), longest first: they run
first, so that in parallel (pytest-xdist, a file a worker) none of them starts last and alone. xdist's own
order (most tests first, ``--loadscope-reorder``) would start these few-test files near the end."""


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False  # the order below, not xdist's


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    rank = {name: i for i, name in enumerate(HEAVIEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(rank)))  # stable: files stay whole
    if _has_cuda():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def analyzer() -> Iterator[Analyzer]:
    with Analyzer(timeout_s=120) as instance:
        instance.warm()
        yield instance


@pytest.fixture(scope="session")
def has_ptxas() -> bool:
    from tilescope.core.worker.ptxas import find_nvcc

    return find_nvcc() is not None or shutil.which("nvcc") is not None
