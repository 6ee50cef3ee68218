"""Shared fixtures: one warm compiler worker for the whole session, and the bundled examples."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tilescope.core.compiler.service import Analyzer

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


def free_port() -> int:
    """A TCP port on loopback that nothing listens on now (for a server a test starts)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


TOP_LEVEL_FOREVER = ROOT / "tests" / "core" / "fixtures" / "top_level_forever.py"
"""A module whose top level never finishes loading, for the tests of ``--timeout`` as the user's clock."""


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


def load_average() -> float:
    return os.getloadavg()[0]


def _has_cuda() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
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
