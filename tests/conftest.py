"""Shared fixtures: one warm compiler worker for the whole session, and the bundled examples."""

from __future__ import annotations

import shutil
import socket
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
