"""Whatever the static tier says and the compiler can confirm must agree with the compiler.

Every bundled example and every buildable fixture: the same buffers with the same shapes, dtypes,
scopes and declaring lines; the same grid and threads; the same pipeline stages; the same shared
memory per block wherever the static tier gives an exact figure.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tilescope.core import Analyzer
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
