"""The Ascend 950 target: the target a kernel declares, the model against plain TileLang's own lowering
(``benchmarks/ascend/truth.json``), and what 0.1.15 refuses as a diagnostic at the user's line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tilescope.core.compiler.service import Analyzer
from tilescope.core.targets import ascend_level, decorator_target, target_error

ROOT = Path(__file__).resolve().parents[2]
CORPUS = Path(os.environ.get("TILESCOPE_ASCEND_CORPUS", ROOT / ".." / "shared" / "corpus" / "tilelang-ascend-examples"))
TRUTH = json.loads((ROOT / "benchmarks" / "ascend" / "truth.json").read_text())
FIXTURES = Path(__file__).parent / "fixtures"
needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus/tilelang-ascend-examples is absent")

sys.path.insert(0, str(ROOT / "benchmarks"))
from bench_ascend import compare  # pyright: ignore[reportMissingImports]  # noqa: E402  (the benchmark's own)


def test_ascend_is_a_target_and_a_declared_one_wins():
    assert target_error("ascend") is None
    assert decorator_target("ascend", "sm_90") == "ascend"
    assert decorator_target({"kind": "ascend"}, "sm_90") == "ascend"
    assert [
        ascend_level(s) for s in ("shared.l1", "shared.l0a", "shared.l0b", "shared.l0c", "shared.dyn", "global")
    ] == [
        "L1",
        "L0A",
        "L0B",
        "L0C",
        "UB",
        "GM",
    ]


def _instance(file: str, kernel: str, **args: Any) -> dict[str, Any]:
    return next(
        e
        for e in TRUTH["instances"]
        if e["file"].endswith(file) and e["kernel"] == kernel and all(e["args"].get(k) == v for k, v in args.items())
    )


@needs_corpus
@pytest.mark.parametrize(
    ("file", "kernel", "args"),
    [
        ("example_vecadd.py", "vector_add", {"N": 1048576, "mode": "simd"}),
        ("example_gemm_bypass_l2.py", "gemm", {}),
        ("example_rmsnorm.py", "rms_norm_fwd", {}),
        ("example_gemm_splitk.py", "gemm_splitk", {}),  # flags between AI cores (asc_sync_inter_*)
        ("example_per_token_cast_to_fp8.py", "per_token_cast_simt", {}),  # a factory calling its own jit
        ("example_simtvf_vecadd_mutex.py", "vector_add", {}),  # tilelang.compile(pass_configs=...): no auto-schedule
    ],
)
def test_analysis_equals_plain_lowering(analyzer: Analyzer, file: str, kernel: str, args: dict[str, Any]):
    """Analysed for the target the file declares (the request says sm_90) and equal to the truth in
    buffers, levels, passes, flag count and core split."""
    entry = _instance(file, kernel, **args)
    assert entry["ok"]
    result = analyzer.analyze(
        str(CORPUS / entry["file"]), kernel=kernel, args={**entry["args"], **entry["consts"]}, hazards_s=0
    )
    model = result.kernel(kernel)
    assert model is not None and model.target == "ascend" and model.ascend is not None
    assert [d for d in result.all_diagnostics() if d.severity == "error"] == []
    assert compare(model, entry) == dict.fromkeys(("buffers", "levels", "passes", "flags", "cores"), True)
    assert model.device_source and "__global__" in model.device_source


@needs_corpus
@pytest.mark.parametrize(
    ("file", "kernel", "code", "line"),
    [
        ("example_simtvf_vector_add.py", "vector_add", "ascend-dialect", 20),
        ("example_mhc_expand.py", "mhc_expand_fwd", "ascend-rejected", 32),  # the T.Parallel loop 'ti' it names
        ("example_mhc_post.py", "mhc_post_fwd", "ascend-rejected", 45),  # the bf16 → fp32 T.copy a DMA cannot cast
    ],
)
def test_what_plain_tilelang_refuses_is_said_at_the_line(
    analyzer: Analyzer, file: str, kernel: str, code: str, line: int
):
    entry = _instance(file, kernel)
    assert not entry["ok"]
    result = analyzer.analyze(
        str(CORPUS / entry["file"]), kernel=kernel, args={**entry["args"], **entry["consts"]}, hazards_s=0
    )
    found = [d for d in result.all_diagnostics() if d.severity == "error"]
    assert [(d.code, d.span.line) for d in found] == [(code, line)]
    assert "internal" not in found[0].message


def test_memory_over_a_level_is_a_warning_that_says_what_the_scheduler_does(analyzer: Analyzer):
    result = analyzer.analyze(str(FIXTURES / "ub_overflow.py"), hazards_s=0)
    warning = next(d for d in result.all_diagnostics() if d.code == "ascend-memory-overflow")
    assert warning.span.line == 12
    assert "262144 bytes of UB" in warning.message and "253952" in warning.message
    failure = next(d for d in result.all_diagnostics() if d.code == "compile-error")
    assert "capacity 253952 is insufficient for minimum buffer usage 262144" in failure.message


@needs_corpus
def test_schedule_command_draws_cube_and_vector_with_the_flags_between():
    done = subprocess.run(
        [
            *(sys.executable, "-m", "tilescope", "schedule", str(CORPUS / "examples/ascend/example_gemm.py")),
            *("--arg", "M_DIM=512", "--arg", "N_DIM=512", "--arg", "K_DIM=512"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert "Cube (AIC)" in text and "Vector (AIV)" in text and "mix kernel" in text
    assert "──────▶" in text  # the Cube-Vector flag after the L0C→UB copy
    assert "L79 gemm(x_l1, w_l1, res)" in text and "for kt in 2 · 2 stages" in text
    assert "flags in the AscendC: 11 (Cube 10, Vector 1)" in text
    # the address plan of tl.MergeUBAllocations: both double-buffered fp8 operands in one dynamic L1 arena
    assert "x_l1 L1 at buf_dyn_l1+0, 2 × 64 KB; w_l1 L1 at buf_dyn_l1+128 KB, 2 × 64 KB" in text


@needs_corpus
def test_editor_hints_name_the_level_and_the_schedule(analyzer: Analyzer):
    from tilescope.core import ide
    from tilescope.core.static import analyze_source

    path = CORPUS / "examples/ascend/example_gemm.py"
    source = path.read_text()
    result = analyzer.analyze(str(path), args={"M_DIM": 512, "N_DIM": 512, "K_DIM": 512}, hazards_s=0)
    static = analyze_source(source, str(path))
    prints = ide.fingerprints(static, source)
    labels = [h.label for h in ide.inlay_hints(ide.facts(static, prints, ide.CompiledSnapshot(result, prints)))]
    assert "32 blocks · Cube + Vector · 11 flags · L1 256 KB · L0C 256 KB · UB 128 KB" in labels
    assert "128×256 · float32 · UB" in labels
    model = result.kernel("gemm")
    assert model is not None
    fractal = model.layout("x_l1")  # the Cube operand's nZ layout: 16×32 fp8 fractals, K-major
    assert fractal is not None and fractal.swizzle == "nZ fractal, K-major" and fractal.output_shape == [8, 16, 16, 32]


def test_a_kernel_declared_for_ascend_is_analysed_for_ascend(analyzer: Analyzer):
    """``@tilelang.jit(target="ascend")`` in the eager style (``T.const``, ``T.empty``): analysed for Ascend
    though the request says sm_90, and its flags are the ``asc_sync_*`` calls of the AscendC it generated."""
    import re

    result = analyzer.analyze(str(FIXTURES / "gemm_relu.py"), target="sm_90", hazards_s=0)
    model = result.kernel("matmul_relu")
    assert model is not None and model.target == "ascend" and model.ascend is not None
    assert [d for d in result.all_diagnostics() if d.severity == "error"] == []
    plan = model.ascend
    assert plan.kernel_kind == "mix" and plan.simt_threads == [128]
    assert model.device_source is not None and "__mix__(1, 2)" in model.device_source
    assert len(plan.flags) == len(re.findall(r"\basc_sync_\w+\(", model.device_source))
    assert {step.core for step in plan.schedule if step.op == "gemm"} == {"cube"}
    assert {b.name: b.level for b in plan.buffers if not b.is_param} == {
        "A_l1": "L1",
        "B_l1": "L1",
        "C_l0c": "L0C",
        "C_ub": "UB",
    }
    assert next(m for m in plan.memory if m.level == "UB").capacity == 216 * 1024  # a SimtVF region: 216 KB
