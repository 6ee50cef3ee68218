"""Where each kernel argument comes from, recorded per value: directive, calls (through tensors,
``main()``'s parameters and ``argparse``), defaults; and a note with a fix for what stays unknown."""

from __future__ import annotations

from pathlib import Path

from tilescope.core.ide import Facts, describe_at
from tilescope.core.static import analyze_source
from tilescope.core.static.split import source_lines

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
GEMM = (EXAMPLES / "gemm.py").read_text()

EAGER = """import argparse

import tilelang
import tilelang.language as T
import torch


@tilelang.jit(
    out_idx=[-1],
)
def scale(X, block=128):
    M, N = T.const("M, N")
    X: T.Tensor((M, N), T.float16)
    Y = T.empty((M, N), T.float16)
    with T.Kernel(T.ceildiv(M, block), threads=128) as bx:
        X_shared = T.alloc_shared((block, N), T.float16)
        T.copy(X[bx * block, 0], X_shared)
        T.copy(X_shared, Y[bx * block, 0])
    return Y


def main(batch=1, dim=64):
    x = torch.randn(batch * 4, dim, device="cuda").half()
    rows, cols = x.shape
    print(rows, cols)
    return scale(x)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch", type=int, default=132)
    parser.add_argument("--dim", type=int, default=256)
    args = parser.parse_args()
    main(args.batch, dim=args.dim)
"""


def bound(source: str) -> dict[str, tuple[object, str, int | None]]:
    (kernel,) = analyze_source(source).kernels
    return {b.name: (b.value, b.origin, b.line) for b in kernel.bindings}


def test_t_const_sizes_come_from_the_tensor_a_call_passes_with_the_argparse_defaults_that_run() -> None:
    found = bound(EAGER)
    call_line = next(n for n, text in enumerate(source_lines(EAGER), 1) if "return scale(x)" in text)
    assert found["M"] == (132 * 4, "call", call_line)
    assert found["N"] == (256, "call", call_line)
    assert found["block"][:2] == (128, "default")
    (kernel,) = analyze_source(EAGER).kernels
    assert kernel.buffer("X_shared").buffer.shape == [128, 256]


def test_hover_says_where_each_number_came_from() -> None:
    static = analyze_source(EAGER)
    lines = source_lines(EAGER)
    line = next(n for n, text in enumerate(lines, 1) if "X_shared = " in text)
    text = describe_at(Facts(static), line, lines[line - 1].index("X_shared") + 1)
    assert text is not None
    assert "block=128 (default, line 11)" in text.markdown
    assert "N=256 (call, line 26)" in text.markdown


def test_a_missing_value_is_a_note_naming_where_tilescope_looked_with_a_directive_fix() -> None:
    source = GEMM.replace("# tilescope: M=1024 N=1024 K=1024\n", "").split('if __name__ == "__main__":')[0]
    static = analyze_source(source)
    (note,) = [d for d in static.diagnostics if d.code == "missing-values"]
    assert note.severity == "information" and note.message.startswith("no value for M, N, K: Tilescope looked for")
    (fix,) = [f for f in static.fixes if f.diagnostic.code == "missing-values"]
    (edit,) = fix.edits
    assert edit.new_text == (
        "# tilescope: M=? N=? K=? block_M=128 block_N=128 block_K=32 dtype=float16 accum_dtype=float32\n"
    )
    lines = source_lines(source)
    lines.insert(
        edit.span.line - 1, edit.new_text.replace("M=?", "M=512").replace("N=?", "N=512").replace("K=?", "K=256")
    )
    (kernel,) = analyze_source("".join(lines)).kernels
    assert {b.name: b.origin for b in kernel.bindings}["M"] == "directive"
    assert kernel.buffer("A").buffer.shape == [512, 256]
    assert "missing-values" not in [d.code for d in analyze_source("".join(lines)).diagnostics]


def test_a_directive_placeholder_is_no_value() -> None:
    source = GEMM.replace("# tilescope: M=1024 N=1024 K=1024", "# tilescope: M=? N=2048 K=1024")
    found = bound(source)
    assert found["M"][:2] == (1024, "call") and found["N"][:2] == (2048, "directive")


def test_an_autotuned_kernel_takes_its_first_config_and_unknown_configs_stay_unknown() -> None:
    source = GEMM.replace(
        "# tilescope: M=1024 N=1024 K=1024\n",
        "# tilescope: M=1024 N=1024 K=1024\n@tilelang.autotune(configs=[{'block_M': 64, 'block_N': 64}])\n",
    )
    found = bound(source)
    assert found["block_M"][:2] == (64, "autotune config 0") and found["block_N"][:2] == (64, "autotune config 0")
    assert found["block_K"][:2] == (32, "default")
    lines = source_lines(source)
    line = next(n for n, text in enumerate(lines, 1) if "A_shared = " in text)
    text = describe_at(Facts(analyze_source(source)), line, lines[line - 1].index("A_shared") + 1)
    assert text is not None and f"block_M=64 (autotune config 0, line {found['block_M'][2]})" in text.markdown
    computed = GEMM.replace("# tilescope: M=1024 N=1024 K=1024\n", "@tilelang.autotune(configs=get_configs())\n")
    found = bound(computed)  # get_configs is not defined in the file: nothing to read
    assert {v[1] for k, v in found.items() if k.startswith("block_")} == {"autotune"}
    assert found["dtype"][:2] == ("float16", "default")


def test_t_empty_takes_a_shape_held_in_a_variable() -> None:
    source = EAGER.replace("Y = T.empty((M, N), T.float16)", "shape = [M, N]\n    Y = T.empty(shape, T.float16)")
    (kernel,) = analyze_source(source).kernels
    assert (kernel.buffer("Y").buffer.shape, kernel.buffer("Y").buffer.dtype) == ([528, 256], "float16")
