"""Whatever the static tier says and the compiler can confirm must agree with the compiler.

Every bundled example and every buildable fixture: the same buffers with the same shapes, dtypes,
scopes and declaring lines; the same grid and threads; the same pipeline stages; the same shared
memory per block wherever the static tier gives an exact figure.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tilescope.core.compiler.service import Analyzer
from tilescope.core.static import analyze_source

from tests.conftest import EXAMPLES

FIXTURES = Path(__file__).parent / "fixtures"
FILES = [*sorted(EXAMPLES.glob("*.py")), FIXTURES / "module_prim_func.py", FIXTURES / "main_call.py"]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_static_facts_match_the_compiler(path: Path, analyzer: Analyzer) -> None:
    compiled = analyzer.analyze(str(path))
    assert compiled.ok, compiled.all_diagnostics()
    static = analyze_source(path.read_text(), str(path))
    assert [k.ref.name for k in static.kernels] == [k.kernel for k in compiled.kernels]
    for kernel, model in zip(static.kernels, compiled.kernels, strict=True):
        said = {d.buffer.name: (d.buffer.shape, d.buffer.dtype, d.buffer.scope, d.buffer.line) for d in kernel.buffers}
        confirmed = {b.name: (b.shape, b.dtype, b.scope, b.line) for b in model.buffers}
        assert said == confirmed
        assert model.launch is not None and kernel.launch is not None
        assert kernel.launch.grid == model.launch.grid
        assert kernel.launch.threads == model.launch.threads
        assert [p.num_stages for p in kernel.pipelines] == [p.num_stages for p in model.pipelines]
        assert kernel.shared_planned in (None, model.shared_bytes), "static shared memory differs from the compiler's"


RULES = FIXTURES / "static_rules.py"
BUILT_BY_TILELANG = {("fp8_gemm", "sm_90"), ("fp8_gemm", "sm_100"), ("fp8_tcgen05", "sm_100"), ("slices", "sm_90")}
"""Cases the static tier once called errors: float16 accumulators of float8 GEMMs (mma, WGMMA, tcgen05) and
a copy between regions of different extents, all of which TileLang 0.1.15 builds and nvcc compiles."""


@pytest.mark.parametrize("target", ["sm_90", "sm_100"])
def test_every_static_error_is_one_the_compiler_raises(target: str, analyzer: Analyzer, has_ptxas: bool) -> None:
    static = analyze_source(RULES.read_text(), str(RULES), target=target)
    errors = {d.kernel: d.code for d in static.diagnostics if d.severity == "error"}
    compiled = analyzer.analyze(str(RULES), target=target, ptxas=has_ptxas)
    for model in compiled.kernels:
        failed = [d.code for d in model.diagnostics if d.severity == "error"]
        if model.kernel in errors:
            # The device compile is what rejects a float16 GEMM accumulating in int32; lowering accepts it.
            assert failed or (not has_ptxas and errors[model.kernel] == "gemm-accum-dtype"), model.kernel
        if (model.kernel, target) in BUILT_BY_TILELANG:
            assert model.kernel not in errors and not failed, (model.kernel, failed)
    assert set(errors) == {"whole", "half_int_accum", "k_mismatch", "row_max_wrong"}
