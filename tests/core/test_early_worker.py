"""A worker started ahead of its analyzer (the language server starts one before importing the rest of
itself): adopted when the analyzer would have started the same one, ended unused otherwise; and the
killed child the zygote reaps while its answer travels is never counted as left behind by user code."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from tilescope.core.compiler.service import Analyzer, EarlyWorker

GEMM = Path(__file__).resolve().parents[2] / "examples" / "gemm.py"


def _gone(link: object) -> bool:
    process = link.process.process  # type: ignore[attr-defined]  # the supervisor's Popen
    deadline = time.monotonic() + 10
    while process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    return process.poll() is not None


def test_an_analyzer_like_the_editors_adopts_the_early_worker_and_answers_without_notes() -> None:
    early = EarlyWorker()
    link = early.link
    assert link is not None
    with Analyzer(timeout_s=120, early=early) as analyzer:
        assert analyzer._worker is link  # pyright: ignore[reportPrivateUsage]  # the process started ahead
        for edit in range(3):
            result = analyzer.analyze(str(GEMM), GEMM.read_text() + f"\n# edit {edit}\n")
            assert result.ok and not result.all_diagnostics(), result.all_diagnostics()
        assert analyzer._worker is link and analyzer.restarts == 0  # pyright: ignore[reportPrivateUsage]
    assert early.link is None


def test_an_analyzer_for_another_interpreter_ends_the_early_worker_unused(tmp_path: Path) -> None:
    other = tmp_path / "python"
    other.symlink_to(sys.executable)
    early = EarlyWorker()
    link = early.link
    assert link is not None
    analyzer = Analyzer(timeout_s=60, python=str(other), early=early)
    try:
        assert analyzer._worker is None  # pyright: ignore[reportPrivateUsage]
        assert _gone(link)
    finally:
        analyzer.close()


def test_a_sealed_analyzer_never_takes_the_early_worker(tmp_path: Path) -> None:
    early = EarlyWorker()
    link = early.link
    assert link is not None
    analyzer = Analyzer(timeout_s=60, sealed=True, early=early)
    try:
        assert analyzer._worker is None and _gone(link)  # pyright: ignore[reportPrivateUsage]
    finally:
        analyzer.close()
