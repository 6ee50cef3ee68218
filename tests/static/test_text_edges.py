"""Text Python reads differently from what it looks like: a byte-order mark, a NUL inside a block,
a lone surrogate, a kernel name outside ASCII; each reported where and as Python would."""

from __future__ import annotations

from pathlib import Path

from tilescope.core.static import analyze_source

GEMM = (Path(__file__).resolve().parents[2] / "examples" / "gemm.py").read_text()


def _codes(source: str) -> list[tuple[str, int]]:
    return [(d.code, d.span.line) for d in analyze_source(source).diagnostics]


def test_a_leading_byte_order_mark_is_not_a_syntax_error() -> None:
    assert _codes("\ufeff" + GEMM) == _codes(GEMM)


def test_a_nul_byte_is_reported_on_its_own_line() -> None:
    lines = GEMM.split("\n")
    index = next(i for i, text in enumerate(lines) if "T.clear" in text)
    source = "\n".join([*lines[:index], "            x = 1\x00", *lines[index:]])
    (found,) = analyze_source(source).diagnostics
    assert (found.code, found.span.line, found.span.column) == ("syntax-error", index + 1, 17)


def test_a_lone_surrogate_is_one_syntax_error_and_no_false_warning() -> None:
    for broken in ("C_l\ud800ocal = T.alloc_fragment", "T.clear(C_local\ud800)"):
        plain = broken.replace("\ud800", "")
        assert [c for c, _ in _codes(GEMM.replace(plain, broken, 1))] == ["syntax-error"]


def test_a_kernel_name_is_selected_in_utf8_columns_as_written() -> None:
    source = (
        'import tilelang.language as T\n\n\n@T.prim_func\ndef  gemm_é中(A: T.Tensor((128,), "float32")):\n    pass\n'
    )
    (kernel,) = analyze_source(source).kernels
    span = kernel.name_span
    line = source.splitlines()[span.line - 1].encode()
    assert line[span.column : span.end_column].decode() == "gemm_é中"
