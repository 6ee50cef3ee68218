"""The analysis so far, sent before the hazard check: an editor shows the lowering's findings while the
interpreter runs. What is sent is confirmed as an answer is, equals the whole analysis but for the hazard
check, and changes nothing of the answer; a file's kernels are heard one by one."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from tilescope.core.compiler.service import Analyzer
from tilescope.core.model import FileAnalysis, KernelModel, to_json

ROOT = Path(__file__).resolve().parents[2]
GEMM = ROOT / "examples" / "gemm.py"
SLOW_CHECK = ROOT / "tests" / "lsp" / "fixtures" / "slow_hazard_check.py"
FORGES = Path(__file__).parent / "fixtures" / "hostile" / "forges_partial.py"
HAZARD_CODES = {"data-race", "missing-barrier", "out-of-bounds", "uninitialised-read"}

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def analyzer() -> Analyzer:
    with Analyzer(timeout_s=60) as warm:
        warm.warm()
        yield warm


def _heard(analyzer: Analyzer, path: Path, **options: object) -> tuple[FileAnalysis, list[tuple[float, FileAnalysis]]]:
    heard: list[tuple[float, FileAnalysis]] = []
    result = analyzer.analyze(str(path), on_partial=lambda so_far: heard.append((time.monotonic(), so_far)), **options)  # type: ignore[arg-type]
    return result, heard


def _without_timings(model: KernelModel) -> dict[str, object]:
    data = to_json(model)
    data.pop("lower_ms")
    data["passes"] = [{k: v for k, v in p.items() if k != "duration_ms"} for p in data["passes"]]
    data.pop("hazard_check")
    data["diagnostics"] = [d for d in data["diagnostics"] if d["code"] not in HAZARD_CODES]
    return data


def test_the_lowering_is_heard_before_the_hazard_check_and_equals_the_whole_but_for_it(analyzer: Analyzer) -> None:
    began = time.monotonic()
    result, heard = _heard(analyzer, SLOW_CHECK)
    ended = time.monotonic()
    ((at, so_far),) = heard
    (partial,) = so_far.kernels
    (whole,) = result.kernels
    assert partial.hazard_check is None and whole.hazard_check is not None
    assert whole.hazard_check.stopped and "stopped after" in whole.hazard_check.stopped  # the 2 s budget ran out
    assert at - began < 1.5 and ended - at > 1.0, (at - began, ended - at)  # heard before the check's 2 s
    assert _without_timings(partial) == _without_timings(whole)
    assert so_far.discovered == result.discovered and so_far.path == result.path


def test_streaming_changes_nothing_of_the_answer(analyzer: Analyzer) -> None:
    streamed, heard = _heard(analyzer, GEMM)
    assert [k.hazard_check for _, f in heard for k in f.kernels] == [None]
    plain = Analyzer.analyze(analyzer, str(GEMM), hazards_s=2.0)
    (a,), (b,) = streamed.kernels, plain.kernels
    assert _without_timings(a) == _without_timings(b)
    assert a.hazard_check is not None and b.hazard_check is not None
    assert a.hazard_check.blocks == b.hazard_check.blocks
    assert [d.code for d in a.diagnostics] == [d.code for d in b.diagnostics]


def test_nothing_is_sent_early_without_a_hazard_check(analyzer: Analyzer) -> None:
    _, heard = _heard(analyzer, GEMM, hazards_s=0.0)
    assert heard == []


def test_a_files_kernels_are_heard_one_by_one(analyzer: Analyzer, tmp_path: Path) -> None:
    source = SLOW_CHECK.read_text()
    two = tmp_path / "two.py"
    two.write_text(source + "\n\n" + source.replace("def long_sum(", "def long_sum_again("))
    result, heard = _heard(analyzer, two)
    names = [[(k.kernel, k.hazard_check is not None) for k in f.kernels] for _, f in heard]
    assert names == [
        [("long_sum", False)],
        [("long_sum", True)],
        [("long_sum", True), ("long_sum_again", False)],
    ]
    assert [k.kernel for k in result.kernels] == ["long_sum", "long_sum_again"]
    assert all(f.discovered == result.discovered for _, f in heard)


def test_a_forged_analysis_so_far_is_never_heard(analyzer: Analyzer) -> None:
    result, heard = _heard(analyzer, FORGES)
    said = [d.message for _, f in heard for d in f.all_diagnostics()]
    assert not any("FORGED" in m for m in said), said
    assert not any("FORGED" in d.message for d in result.all_diagnostics())
    assert any(d.code == "worker-channel" and "forged" in d.message for d in result.all_diagnostics()), [
        (d.code, d.message) for d in result.all_diagnostics()
    ]
    assert analyzer.analyze(str(GEMM)).ok  # the warm worker goes on
