"""Bank-conflict arithmetic on layouts whose conflicts can be derived by hand."""

from __future__ import annotations

import numpy as np
import pytest
from tilescope.core.dtypes import dtype_bits, require_bits
from tilescope.core.layout_eval import shared_map
from tilescope.core.model import Layout
from tilescope.core.perf.bank_conflicts import (
    analyze,
    column_reads,
    ldmatrix_tiles,
    phase_degrees,
    row_vectors,
    tile_offsets,
)


def _layout(index: str, shape: list[int], out: int) -> Layout:
    return Layout(
        buffer="S", kind="layout", input_shape=shape, output_shape=[out], input_vars=["i", "j"], index=[index]
    )


ROW_MAJOR = _layout("i * 64 + j", [32, 64], 32 * 64)
"""fp16, 64 columns: every row is exactly 128 bytes, so a column lives in one bank."""
FULL_BANK = _layout("i * 64 + T.bitwise_xor(j // 8, i % 8) * 8 + j % 8", [32, 64], 32 * 64)
"""TileLang's 128-byte swizzle: 16-byte vector c of row r is stored at c ^ (r % 8)."""
PADDED = _layout("i * 72 + j", [32, 64], 32 * 72)
"""TileLang's padded fallback: 16 bytes of padding per row."""


def _offsets(layout: Layout) -> np.ndarray:
    return tile_offsets(shared_map(layout))


def test_distinct_words_in_one_bank_serialise_and_shared_words_broadcast():
    assert phase_degrees(np.array([[0, 32, 64, 96]])).tolist() == [4]
    assert phase_degrees(np.array([[0, 0, 0, 0]])).tolist() == [1]
    assert phase_degrees(np.arange(32).reshape(1, 32)).tolist() == [1]
    assert phase_degrees(np.array([[0, 32, 1, 33], [5, 6, 7, 8]])).tolist() == [2, 1]


def test_row_major_tile_conflicts_eight_ways_under_ldmatrix():
    # 8 rows 128 bytes apart start in bank 0: the 8 row reads of each tile serialise.
    report = ldmatrix_tiles(_offsets(ROW_MAJOR), 16)
    assert report.max_degree == 8
    assert report.slowdown == 8.0
    assert (report.degree == 8).all()


def test_full_bank_swizzle_removes_ldmatrix_conflicts():
    report = ldmatrix_tiles(_offsets(FULL_BANK), 16)
    assert report.max_degree == 1
    assert report.wavefronts == report.ideal == (32 // 8) * (64 // 8)


def test_padding_also_removes_ldmatrix_conflicts():
    assert ldmatrix_tiles(_offsets(PADDED), 16).max_degree == 1


@pytest.mark.parametrize("layout", [ROW_MAJOR, FULL_BANK, PADDED])
def test_coalesced_16_byte_row_reads_never_conflict_on_these_layouts(layout):
    report = row_vectors(_offsets(layout), 16)
    assert report.max_degree == 1
    # 32 rows × 128 bytes = 32 phases of 8 threads × 16 bytes
    assert report.ideal == 32


def test_column_reads_hit_one_bank_on_row_major_and_four_ways_under_swizzle():
    # row-major: 32 rows of a column are 32 distinct words in one bank
    assert column_reads(_offsets(ROW_MAJOR), 16).max_degree == 32
    # swizzled: rows r and r+8 land in the same bank; 8 bank groups × 4 rows each
    assert column_reads(_offsets(FULL_BANK), 16).max_degree == 4


def test_4_byte_elements_in_a_32_word_row_conflict_32_ways_down_a_column():
    fp32 = _layout("i * 32 + j", [32, 32], 1024)
    assert column_reads(_offsets(fp32), 32).max_degree == 32
    assert row_vectors(_offsets(fp32), 32, vector_bytes=4).max_degree == 1


def test_heatmap_marks_each_element_with_its_phase_degree():
    half = _layout("T.if_then_else(i < 8, i * 72 + j, i * 64 + j)", [16, 64], 16 * 72)
    report = ldmatrix_tiles(_offsets(half), 16)
    assert (report.degree[:8] == 1).all()
    assert (report.degree[8:] == 8).all()


def test_stage_dimension_is_set_aside():
    staged = Layout(
        buffer="S",
        kind="layout",
        input_shape=[3, 32, 64],
        output_shape=[3, 2048],
        input_vars=["s", "i", "j"],
        index=["s", "i * 64 + j"],
    )
    assert tile_offsets(shared_map(staged)).shape == (32, 64)


def test_analyze_skips_patterns_that_do_not_fit():
    tiny = _layout("i * 8 + j", [4, 8], 32)
    assert [r.pattern for r in analyze(shared_map(tiny), "float16")] == ["row-16B", "column"]


@pytest.mark.parametrize(
    ("dtype", "bits"), [("float16", 16), ("bfloat16", 16), ("float8_e4m3", 8), ("int4", 4), ("float32", 32)]
)
def test_dtype_bits(dtype, bits):
    assert dtype_bits(dtype) == bits


def test_dtype_without_a_width_has_no_bits():
    assert dtype_bits("handle") is None
    with pytest.raises(ValueError, match="no bit width"):
        require_bits("handle")
