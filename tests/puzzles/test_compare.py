"""The grader's judgement on CPU tensors: first wrong index, expected vs got, errors, counts,
where the wrong elements are, unwritten elements and writes outside an output."""

from __future__ import annotations

import math

import pytest
import torch
from tilescope.puzzles.compare import compare, default_tolerance


def test_identical_tensors_are_right() -> None:
    x = torch.randn(10, 20)
    result = compare(x, x.clone(), 1e-5, 1e-5)
    assert result.ok and result.wrong == 0 and result.first_wrong is None and result.heatmap == []


def test_reports_first_wrong_index_values_errors_and_count() -> None:
    expected = torch.zeros(4, 8)
    got = expected.clone()
    got[2, 5] = 3.0
    got[3, 1] = -0.5
    result = compare(expected, got, atol=1e-3, rtol=1e-3)
    assert result.wrong == 2 and result.total == 32
    assert result.first_wrong == [2, 5]
    assert result.expected == 0.0 and result.got == 3.0
    assert result.max_abs_error == pytest.approx(3.0)


def test_relative_error_is_against_the_expected_magnitude() -> None:
    expected = torch.tensor([100.0, 200.0])
    got = torch.tensor([101.0, 200.0])
    result = compare(expected, got, atol=0.0, rtol=1e-3)
    assert result.wrong == 1
    assert result.max_rel_error == pytest.approx(0.01)


def test_tolerance_follows_isclose() -> None:
    expected = torch.tensor([1.0, 1.0])
    got = torch.tensor([1.0 + 9e-4, 1.0 + 2e-3])
    assert compare(expected, got, atol=0.0, rtol=1e-3).wrong == 1


def test_nan_where_a_number_was_due_is_wrong_and_matching_nan_is_not() -> None:
    expected = torch.tensor([1.0, math.nan, 2.0])
    got = torch.tensor([math.nan, math.nan, 2.0])
    result = compare(expected, got, 1e-5, 1e-5)
    assert result.wrong == 1 and result.first_wrong == [0]
    assert result.nan == 1 and result.max_abs_error == 0.0
    assert result.abs_error_words == "max abs error nan (1 NaN where numbers were due)"


def test_heatmap_locates_the_wrong_region() -> None:
    expected = torch.zeros(64, 256)
    got = expected.clone()
    got[56:, 248:] = 1.0  # the bottom-right cell of an 8 x 32 grid
    result = compare(expected, got, 1e-5, 1e-5)
    assert len(result.heatmap) == 8 and len(result.heatmap[0]) == 32
    assert result.heatmap[-1][-1] == 1.0
    assert result.heatmap[0][0] == 0.0
    assert sum(v > 0 for row in result.heatmap for v in row) == 1


def test_fp16_outputs_are_compared_in_float64() -> None:
    expected = torch.tensor([1000.0], dtype=torch.float16)
    got = torch.tensor([1001.0], dtype=torch.float16)
    atol, rtol = default_tolerance(torch.float16)
    assert compare(expected, got, atol, rtol).ok


def test_shape_mismatch_is_an_error() -> None:
    with pytest.raises(ValueError, match="shapes differ"):
        compare(torch.zeros(3), torch.zeros(4), 0.0, 0.0)
