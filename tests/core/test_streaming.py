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


AUTOTUNED = Path(__file__).parent / "fixtures" / "autotuned.py"
TUNED_RACE = """
import tilelang
import tilelang.language as T
from tilelang.autotuner import autotune


@autotune(configs=[{"block": 64}], warmup=5, rep=5)
@tilelang.jit(out_idx=[1])
def racy(N=256, block=64):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, block), threads=128) as bx:
            for i in T.Parallel(block + 1):
                B[bx * block + i] = A[bx * block + i] * (bx + 1)

    return main
"""


@pytest.mark.parametrize(("kernel", "config"), [("tuned_gemm", 1), ("tune_api", 1)])
def test_an_autotuned_kernel_whose_config_is_named_is_heard_before_its_check(
    analyzer: Analyzer, kernel: str, config: int
) -> None:
    args = {"M": 1024, "N": 1024, "K": 1024, "config": config}
    streamed, heard = _heard(analyzer, AUTOTUNED, kernel=kernel, args=args)
    ((_, so_far),) = heard
    (partial,), (whole,) = so_far.kernels, streamed.kernels
    assert partial.hazard_check is None and whole.hazard_check is not None
    assert partial.autotune is not None and whole.autotune is not None and whole.autotune.chosen == config
    plain = analyzer.analyze(str(AUTOTUNED), kernel=kernel, args=args)
    assert _without_timings(whole) == _without_timings(plain.kernels[0])
    assert whole.autotune == plain.kernels[0].autotune


def test_a_one_config_space_is_heard_before_its_check_and_its_row_counts_the_check(
    analyzer: Analyzer, tmp_path: Path
) -> None:
    path = tmp_path / "tuned_race.py"
    path.write_text(TUNED_RACE)
    streamed, heard = _heard(analyzer, path)
    ((_, so_far),) = heard
    (partial,), (whole,) = so_far.kernels, streamed.kernels
    assert partial.autotune is not None and whole.autotune is not None
    assert [c.status for c in partial.autotune.configs] == ["fits"]  # as far as the lowering says
    assert "data-race" in [d.code for d in whole.diagnostics]
    assert [c.status for c in whole.autotune.configs] == ["fails"]  # the race counts
    assert whole.autotune.summary != partial.autotune.summary
    plain = analyzer.analyze(str(path))
    assert whole.autotune == plain.kernels[0].autotune
    assert [d.code for d in whole.diagnostics] == [d.code for d in plain.kernels[0].diagnostics]
