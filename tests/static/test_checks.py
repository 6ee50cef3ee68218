"""Static checks name the mistake, the buffers involved and the line, before anything compiles."""

from __future__ import annotations

from pathlib import Path

from tilescope.core.static import analyze_source

FIXTURES = Path(__file__).resolve().parents[1] / "lsp" / "fixtures"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
GEMM = (EXAMPLES / "gemm.py").read_text()


def findings(source: str, target: str = "sm_90") -> list[tuple[int, str, str, str]]:
    return [(d.span.line, d.severity, d.code, d.message) for d in analyze_source(source, target=target).diagnostics]


def test_b_tile_of_the_wrong_orientation_fed_to_gemm() -> None:
    assert findings((FIXTURES / "wrong_gemm.py").read_text()) == [
        (
            18,
            "error",
            "gemm-shape",
            "T.gemm K mismatch: A_shared gives K = 32, B_shared gives K = 128; B_shared is 128×32, "
            "so pass transpose_B=True or allocate it as 32×128",
        ),
    ]


def test_the_transpose_fix_is_offered_as_an_edit_and_makes_the_tile_correct() -> None:
    source = (FIXTURES / "wrong_gemm.py").read_text()
    (fix,) = analyze_source(source).fixes
    assert fix.title == "Pass transpose_B=True" and fix.diagnostic.code == "gemm-shape"
    (edit,) = fix.edits
    lines = source.splitlines(keepends=True)
    line = lines[edit.span.line - 1]
    lines[edit.span.line - 1] = line[: edit.span.column] + edit.new_text + line[edit.span.end_column :]
    fixed = "".join(lines)
    assert "T.gemm(A_shared, B_shared, C_local, transpose_B=True)" in fixed
    assert findings(fixed) == []


def test_float16_accumulation_is_not_an_opinion_the_tool_voices() -> None:
    source = (FIXTURES / "wrong_gemm.py").read_text()
    fixed = source.replace(
        "T.gemm(A_shared, B_shared, C_local)", "T.gemm(A_shared, B_shared, C_local, transpose_B=True)"
    )
    assert findings(fixed) == []


def test_dtype_parameters_are_unknown_and_never_compared() -> None:
    source = GEMM.replace('dtype="float16"', "dtype=None").replace('accum_dtype="float32"', "accum_dtype=None")
    source = source.replace("def matmul(", "def matmul(in_dtype, out_dtype, ")
    assert findings(source) == []


def test_integer_accumulator_for_half_inputs_is_an_error() -> None:
    source = GEMM.replace('accum_dtype="float32"', 'accum_dtype="int32"')
    assert findings(source) == [
        (
            23,
            "error",
            "gemm-accum-dtype",
            "T.gemm accumulator C_local is int32; float16 inputs accumulate in float16 or float32",
        )
    ]


def test_output_tile_that_does_not_match_a_times_b() -> None:
    source = GEMM.replace("C_local = T.alloc_fragment((block_M, block_N)", "C_local = T.alloc_fragment((block_M, 64)")
    assert findings(source)[0][2:] == (
        "gemm-shape",
        "T.gemm output shape: A_shared·B_shared is 128×128 but C_local is 128×64",
    )


def test_copy_between_tiles_of_different_shapes() -> None:
    source = GEMM.replace("T.copy(C_local, C[by * block_M, bx * block_N])", "T.copy(A_shared, B_shared)")
    assert findings(source) == [
        (24, "error", "copy-shape", "T.copy shapes differ: A_shared is 128×32 but B_shared is 32×128")
    ]


def test_shared_memory_over_the_target_budget_counts_pipeline_stages() -> None:
    found = findings((FIXTURES / "budgets.py").read_text())
    assert found[0] == (
        11,
        "warning",
        "shared-memory",
        "shared memory of at least 256 KB per block (live together from line 16: A_shared 32 KB × 4 stages, "
        "B_shared 32 KB × 4 stages) exceeds the sm_90 limit of 227 KB",
    )


def test_the_same_kernel_fits_a_smaller_pipeline() -> None:
    source = (FIXTURES / "budgets.py").read_text().replace("stages=4", "stages=3")
    assert "shared-memory" not in [f[2] for f in findings(source)]


def test_a_smaller_target_budget_is_used_when_asked() -> None:
    found = findings(GEMM.replace("num_stages=3", "num_stages=12"), target="sm_86")
    assert found == [
        (
            15,
            "warning",
            "shared-memory",
            "shared memory of at least 192 KB per block (live together from line 20: A_shared 8 KB × 12 stages, "
            "B_shared 8 KB × 12 stages) exceeds the sm_86 limit of 99 KB",
        )
    ]


def test_buffers_a_loop_does_not_feed_from_global_memory_are_kept_once() -> None:
    """TileLang versions only what a pipelined loop loads; the rest may share memory, so no warning."""
    source = (FIXTURES / "budgets.py").read_text().replace("T.gemm(A_shared, B_shared, C_local)", "pass")
    assert "shared-memory" not in [f[2] for f in findings(source)]


def test_reduce_output_must_drop_the_reduced_dimension() -> None:
    source = (EXAMPLES / "softmax.py").read_text()
    broken = source.replace("T.reduce_max(X_local, row_max, dim=1)", "T.reduce_max(X_local, row_max, dim=0)")
    assert findings(broken) == [
        (
            21,
            "error",
            "reduce-shape",
            "T.reduce_max along dim 0 of X_local (64×256) gives 256, but row_max is 64",
        )
    ]


def test_unknown_primitive_is_a_note_that_suggests_the_closest_name() -> None:
    found = findings((FIXTURES / "budgets.py").read_text())
    assert (
        31,
        "information",
        "unknown-primitive",
        "T.cop is not in the catalog of tilelang.language 0.1.15; did you mean T.copy?",
    ) in found


def test_wrong_arguments_to_a_primitive_are_notes() -> None:
    found = [f for f in findings((FIXTURES / "budgets.py").read_text()) if f[2] == "wrong-arguments"]
    assert found == [
        (32, "information", "wrong-arguments", "T.fill got multiple values for argument 'value' (TileLang 0.1.15)")
    ]
    misspelt = findings(
        GEMM.replace("T.gemm(A_shared, B_shared, C_local)", "T.gemm(A_shared, B_shared, C_local, transpose_b=True)")
    )
    assert misspelt == [
        (
            23,
            "information",
            "wrong-arguments",
            "T.gemm has no argument 'transpose_b'; did you mean transpose_B? (TileLang 0.1.15)",
        )
    ]


def test_a_keyword_tilelangs_wrapper_moves_to_the_front_is_not_given_twice() -> None:
    """``T.call_extern`` is ``_dtype_forward(call_extern)``: ``dtype=`` goes before the positional
    arguments, so ``T.call_extern(name, a, dtype=d)`` is valid (TileLang's dequantize examples)."""
    call = 'T.call_extern("decode", A_shared[0, 0], 1, dtype="float16")'
    valid = findings(GEMM.replace("T.gemm(A_shared, B_shared, C_local)", call))
    assert [f for f in valid if f[2] == "wrong-arguments"] == []
    short = findings(GEMM.replace("T.gemm(A_shared, B_shared, C_local)", 'T.call_extern(dtype="float16")'))
    assert (23, "information", "wrong-arguments", "T.call_extern is missing func_name (TileLang 0.1.15)") in short


def test_symbolic_shapes_are_never_guessed_at() -> None:
    source = GEMM.replace("# tilescope: M=1024 N=1024 K=1024\n", "").replace("block_K=32", "block_K=None")
    assert findings(source) == []


def test_gemm_operands_of_two_dtypes_mma_cannot_mix_is_an_error() -> None:
    source = GEMM.replace(
        "B_shared = T.alloc_shared((block_K, block_N), dtype)", 'B_shared = T.alloc_shared((block_K, block_N), "int8")'
    )
    assert findings(source) == [
        (23, "error", "gemm-dtype", "T.gemm operands differ in dtype: A_shared is float16, B_shared is int8")
    ]


def test_a_block_too_deep_for_the_parser_is_noted_and_the_rest_analysed() -> None:
    static = analyze_source(GEMM + "\nx = " + "-" * 100_000 + "1\n")
    assert [(d.code, d.severity) for d in static.diagnostics] == [("not-analysed", "information")]
    assert [k.ref.name for k in static.kernels] == ["matmul"]
