"""What ``tilescope record`` saw and ``# tilescope:`` directives between a decorator and its ``def`` feed
the editor's own facts (hints, hover), not only the compiler tier."""

from __future__ import annotations

import json
from pathlib import Path

from tilescope.core.compiler.discovery import instantiations
from tilescope.core.ide import Facts, describe_at, inlay_hints
from tilescope.core.static import analyze_source

KERNEL = """\
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def scale(M, N, dtype, block_M=64):
    @T.prim_func
    def main(A: T.Tensor[(M, N), dtype], B: T.Tensor[(M, N), dtype]):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            tile = T.alloc_fragment((block_M, N), dtype)
            T.copy(A[bx * block_M, 0], tile)
            T.copy(tile, B[bx * block_M, 0])

    return main
"""


def _recorded(tmp_path: Path) -> Path:
    path = tmp_path / "kernels.py"
    path.write_text(KERNEL)
    entry = {
        "file": "kernels.py",
        "kernel": "scale",
        "args": {"M": 1024, "N": 256, "dtype": {"$value": "tilelang.dtype", "name": "float16"}},
        "consts": {"M": 1024, "N": 256},
    }
    (tmp_path / ".tilescope").mkdir()
    (tmp_path / ".tilescope" / "instances.json").write_text(json.dumps({"version": 1, "instances": [entry]}))
    return path


def test_recorded_values_size_the_static_hints_and_hover(tmp_path: Path) -> None:
    path = _recorded(tmp_path)
    static = analyze_source(KERNEL, str(path))
    (kernel,) = static.kernels
    assert {b.name: (b.value, b.origin) for b in kernel.bindings if b.origin == "recorded"} == {
        "M": (1024, "recorded"),
        "N": (256, "recorded"),
        "dtype": ("float16", "recorded"),
    }
    labels = {h.label for h in inlay_hints(Facts(static))}
    assert "64×256 · float16 · local.fragment" in labels and "1024×256 · float16" in labels
    assert "grid 16 · 128 threads" in labels
    tip = describe_at(Facts(static), 10, 13)
    assert tip is not None and "N=256 (recorded in .tilescope/instances.json)" in tip.markdown
    assert not [d for d in static.diagnostics if d.code == "missing-values"]


def test_without_the_record_the_sizes_are_unknown(tmp_path: Path) -> None:
    path = tmp_path / "kernels.py"
    path.write_text(KERNEL)
    (kernel,) = analyze_source(KERNEL, str(path)).kernels
    assert not [b for b in kernel.bindings if b.origin == "recorded"]


def test_a_directive_between_the_decorator_and_the_def_counts() -> None:
    source = KERNEL.replace(
        "def scale(M, N, dtype, block_M=64):",
        "# tilescope: M=2048 N=128 dtype=float32\ndef scale(M, N, dtype, block_M=64):",
    )
    (kernel,) = analyze_source(source).kernels
    assert {b.name: (b.value, b.origin, b.line) for b in kernel.bindings if b.origin == "directive"} == {
        "M": (2048, "directive", 6),
        "N": (128, "directive", 6),
        "dtype": ("float32", "directive", 6),
    }
    (inst,) = instantiations(source)
    assert inst.args == {"M": 2048, "N": 128, "dtype": "float32"} and not inst.missing
    assert "64×128 · float32 · local.fragment" in {h.label for h in inlay_hints(Facts(analyze_source(source)))}
