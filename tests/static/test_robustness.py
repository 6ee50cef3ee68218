"""Text no kernel would contain still gets an answer at once, and the rest of the file its hints."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from tilescope.core.ide import Facts, describe_at
from tilescope.core.ide.hints import inlay_hints
from tilescope.core.ide.navigate import outline
from tilescope.core.static import analyze_source
from tilescope.core.static.split import source_lines, split_blocks

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
GEMM = (EXAMPLES / "gemm.py").read_text()
SOFTMAX = (EXAMPLES / "softmax.py").read_text()


@pytest.mark.parametrize(
    "value",
    [
        "10**10**8",
        "10**5000",
        "1 << 100000000",
        "2**39 * 2**39 * 2**39",
        "'a' * 10**9",
        "(1,) * 10**9",
        "float('inf')",
    ],
)
def test_huge_values_are_unknown_and_answered_at_once(value: str) -> None:
    source = GEMM.replace("block_M=128", f"block_M={value}") + "\n\n" + SOFTMAX
    began = time.perf_counter()
    static = analyze_source(source)
    hints = inlay_hints(Facts(static))
    assert time.perf_counter() - began < 0.2
    assert [d for d in static.diagnostics if d.severity == "error"] == []
    (gemm, softmax) = static.kernels
    assert gemm.buffer("A_shared").buffer.shape[0] == "block_M"
    assert softmax.buffer("X_shared").buffer.shape == [64, 256]
    assert any(h.line > len(source_lines(GEMM)) for h in hints)


def test_an_expression_too_deep_for_python_is_a_note_and_the_next_kernel_keeps_its_hints() -> None:
    source = GEMM.replace("block_M=128", "block_M=" + "+".join(["1"] * 20000)) + "\n\n" + SOFTMAX
    static = analyze_source(source)
    assert [k.ref.name for k in static.kernels][-1] == "softmax"
    assert all(d.severity != "error" for d in static.diagnostics if d.code != "syntax-error")


def test_characters_python_reads_inside_a_line_do_not_move_lines() -> None:
    """Form feeds, \\x1c and U+2028 split ``str.splitlines`` but not Python's lines."""
    source = GEMM.replace('"""', '"""\u2028 \x0c \x1c \x85', 1)
    assert len(source_lines(source)) == len(source_lines(GEMM))
    (kernel,) = analyze_source(source).kernels
    (original,) = analyze_source(GEMM).kernels
    assert kernel.span == original.span and kernel.buffers == original.buffers


def test_a_kernel_def_without_a_body_keeps_its_name_within_its_line() -> None:
    source = GEMM.split("if __name__")[0] + "\n\ndef matmul_two(M, N\n"
    lines = source_lines(source)
    for node in outline(Facts(analyze_source(source))):
        text = lines[node.selection.line - 1].rstrip("\n")
        assert node.selection.end_column is not None and node.selection.end_column <= len(text)


def test_hover_names_each_primitive_by_its_own_docstring() -> None:
    static = analyze_source(GEMM)
    lines = source_lines(GEMM)
    line = next(n for n, text in enumerate(lines, 1) if "T.clear(" in text)
    found = describe_at(Facts(static), line, lines[line - 1].index("T.clear") + 3)
    assert found is not None and "clear(" in found.markdown.splitlines()[1]
    assert "Clear a buffer by filling it with zeros" in found.markdown


def test_multi_line_decorators_stay_with_their_def() -> None:
    source = (
        "import tilelang\nimport tilelang.language as T\n\n\n"
        "@autotune(\n    configs=[{'a': 1}],\n)\n@tilelang.jit(\n    out_idx=[-1],\n)\n"
        "def kernel(M=128):\n    @T.prim_func\n    def main(A: T.Tensor((M,), 'float32')):\n"
        "        with T.Kernel(1) as bx:\n            A_local = T.alloc_fragment((M,), 'float32')\n"
        "            T.copy(A, A_local)\n\n    return main\n"
    )
    assert split_blocks(source_lines(source)) == [(1, 1), (2, 4), (5, 18)]
    static = analyze_source(source)
    assert static.diagnostics == []
    (kernel,) = static.kernels
    assert (kernel.ref.name, kernel.ref.style, kernel.span.line) == ("kernel", "jit-factory", 11)
