"""The kernel process's environment is the grader's to set where a variable changes verdicts."""

from __future__ import annotations

from pathlib import Path

import pytest
from tilescope.puzzles.session import Session


def test_the_kernel_process_keeps_torchs_caching_allocator(monkeypatch: pytest.MonkeyPatch) -> None:
    """On the H200 a caller's ``PYTORCH_NO_CUDA_MEMORY_CACHING=1`` turned ``no_halo.py``'s illegal access
    into an abort of the kernel process (verdict ``child-exit`` where the puzzle declares ``runtime-error``)."""
    monkeypatch.setenv("PYTORCH_NO_CUDA_MEMORY_CACHING", "1")
    monkeypatch.setenv("CUDA_MODULE_LOADING", "LAZY")  # one the kernel process's allow-list passes on
    session = Session(cpu_only=True, keep_spare=False, precompile=False)
    try:
        child, _ = session.executor()
        environ = Path(f"/proc/{child.process.pid}/environ").read_bytes().split(b"\0")
    finally:
        session.close()
    assert b"CUDA_MODULE_LOADING=LAZY" in environ
    assert not [item for item in environ if item.startswith(b"PYTORCH_NO_CUDA_MEMORY_CACHING=")]
