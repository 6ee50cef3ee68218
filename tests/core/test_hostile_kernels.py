"""Kernels that attack the process building them: each becomes a diagnostic on its own file, the
next file compiles, and nothing the kernel started is left running."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from tilescope.core.compiler.service import Analyzer
from tilescope.core.model import FileAnalysis

FIXTURES = Path(__file__).parent / "fixtures"
HOSTILE = FIXTURES / "hostile"
GOOD = FIXTURES / "module_prim_func.py"
MARK = "613.25"


def _survivors() -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        if MARK.encode() in cmdline.split(b"\0"):
            found.append(int(entry))
    return found


def _diagnostics(result: FileAnalysis) -> list[tuple[str, str, int]]:
    return [(d.severity, d.code, d.span.line) for d in result.all_diagnostics()]


@pytest.fixture(scope="module")
def strict() -> Analyzer:
    with Analyzer(timeout_s=20, memory_mb=4096) as analyzer:
        yield analyzer


# (fixture, code of the one diagnostic, words its message must contain, whether the kernel still compiles)
CASES = [
    ("signals_parent.py", "supervised", "SIGTERM", True),
    ("stray_bytes.py", "supervised", "private reply channel", True),
    ("spawns.py", "supervised", "were ended", True),
    ("closes_channels.py", "worker-crash", "closed or replaced its private protocol descriptors", False),
    ("replaces_requests.py", "worker-channel", "broke the compiler worker's protocol (user code replaced", False),
    ("segfaults.py", "worker-crash", "SIGSEGV", False),
    ("stops_parent.py", "supervisor-lost", "supervisor", False),
    # The parent of user code is the worker's zygote now: killing it ends the worker, reported as such.
    ("kills_parent.py", "worker-crash", "SIGKILL", False),
    ("allocates.py", "build-error", "ran out of memory", False),
    ("orphans.py", "worker-crash", "SIGKILL", False),
    ("spins.py", "worker-leftovers", "thread(s) still running (spinner)", False),
    # Leftovers, a forged answer never confirmed, or a timeout where the forging thread keeps the build past its
    # limit: no forged frame is a result.
    ("forges.py", "worker-leftovers|worker-channel|timeout", "", False),
    ("unprintable_error.py", "internal-error", "cannot be printed", False),
]


@pytest.mark.parametrize(("fixture", "code", "words", "compiles"), CASES, ids=[c[0] for c in CASES])
def test_hostile_kernel_is_reported_at_its_file_and_the_next_file_compiles(
    strict: Analyzer, fixture: str, code: str, words: str, compiles: bool
) -> None:
    result = strict.analyze(str(HOSTILE / fixture))
    (found,) = [d for d in result.all_diagnostics() if d.code in code.split("|")]
    assert words in found.message, found.message
    assert found.span.line > 1 and result.path.endswith(fixture)
    assert result.ok == compiles
    after = strict.analyze(str(GOOD))
    assert after.ok and not after.all_diagnostics(), _diagnostics(after)
    deadline = time.monotonic() + 2
    while _survivors() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _survivors() == []


def test_closing_stdin_and_stdout_is_harmless(strict: Analyzer) -> None:
    result = strict.analyze(str(HOSTILE / "closes_stdin.py"))
    assert result.ok and not result.all_diagnostics(), _diagnostics(result)
    assert strict.analyze(str(GOOD)).ok


def test_closing_the_analyzer_ends_every_process_of_the_tree(tmp_path: Path) -> None:
    with Analyzer(timeout_s=20) as analyzer:
        analyzer.warm()
        worker = analyzer._worker
        assert worker is not None
        pids = [worker.process.process.pid, worker.process.pid]
    for pid in pids:
        assert not Path(f"/proc/{pid}").exists() or b"Z" in Path(f"/proc/{pid}/stat").read_bytes().split(b")")[-1][:3]


STATE = ["patches_json.py", "patches_tilelang.py", "installs_import_hook.py", "patches_tilescope.py"]
"""Kernels that leave the process changed without a thread: a patched module, a monkeypatched TileLang,
an import hook, a changed global of Tilescope's own."""


@pytest.mark.parametrize("fixture", STATE)
def test_state_a_kernel_leaves_never_reaches_the_next_answer(strict: Analyzer, fixture: str) -> None:
    assert strict.analyze(str(HOSTILE / fixture)).kernels
    clean = GOOD.read_text() + f"# after {fixture}\n"  # a new text: the analyzer's own cache cannot answer
    after = strict.analyze(str(GOOD), clean)
    (kernel,) = after.kernels
    assert kernel.kernel == "double" and after.ok and not after.all_diagnostics(), _diagnostics(after)
    assert kernel.launch is not None and kernel.launch.threads == 128
