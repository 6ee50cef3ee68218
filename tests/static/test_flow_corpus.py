"""The sizes TileLang's own examples run, found by the static tier: values the corpus ground truth
(``benchmarks/corpus_truth.json``, recorded from real runs) holds for these kernels."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from tilescope.core.static import analyze_source

CORPUS = Path(
    os.environ.get(
        "TILESCOPE_CORPUS", Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus" / "tilelang-examples"
    )
)

pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason="the TileLang examples corpus is not beside the repository")


def values(relative: str, kernel: str) -> dict[str, tuple[object, str]]:
    path = CORPUS / "examples" / relative
    found = next(k for k in analyze_source(path.read_text(), str(path)).kernels if k.ref.name == kernel)
    return {b.name: (b.value, b.origin) for b in found.bindings}


def shapes(relative: str, kernel: str) -> dict[str, list[object]]:
    path = CORPUS / "examples" / relative
    found = next(k for k in analyze_source(path.read_text(), str(path)).kernels if k.ref.name == kernel)
    return {d.buffer.name: d.buffer.shape for d in found.buffers}


def test_argparse_defaults_through_main_and_an_autograd_forward() -> None:
    # __main__ passes --h 64 --n_ctx 4096 ... to main(), which calls attention() = _attention.apply.
    found = values("attention_sink/example_gqa_sink_bwd_bhsd.py", "flashattn_fwd")
    assert {k: found[k][0] for k in ("batch", "heads", "seq_len", "dim", "groups", "window_size")} == {
        "batch": 1,
        "heads": 64,
        "seq_len": 4096,
        "dim": 128,
        "groups": 8,
        "window_size": 128,
    }
    assert found["dtype"] == ("float16", "call")


def test_a_test_helper_in_a_loop_and_a_scale_computed_from_the_tensor() -> None:
    found = values("block_causal_attention/block_causal_attention.py", "_fwd_template")
    assert {k: found[k][0] for k in ("batch", "heads", "seq_len", "dim", "dllm_block", "softmax_scale")} == {
        "batch": 2,
        "heads": 2,
        "seq_len": 256,
        "dim": 64,
        "dllm_block": 1,
        "softmax_scale": 0.125,
    }


def test_a_method_that_builds_the_kernel_and_tensors_made_by_file_helpers() -> None:
    found = values("deepseek_deepgemm/example_deepgemm_fp8_2xAcc.py", "tl_gemm")
    assert {k: found[k][0] for k in ("M", "N", "K", "block_N")} == {"M": 1024, "N": 1024, "K": 8192, "block_N": 16}


def test_autotune_config_zero_and_digit_strings_give_the_compilers_numbers() -> None:
    found = values("kda/chunk_o.py", "tilelang_chunk_fwd_o")
    assert found["block_DK"] == (32, "autotune config 0") and found["threads"] == (128, "autotune config 0")
    assert shapes("kda/chunk_o.py", "tilelang_chunk_fwd_o")["Q_shared"] == [64, 32]
    # ``convolution.compile(N=N, ..., **get_heuristic_config())``: the device's heuristic, not config 0, fills
    # the tile sizes (and whatever else it names), which only a run knows.
    found = values("convolution/example_convolution_autotune.py", "convolution")
    assert found["N"] == (128, "call") and found["block_M"][:2] == (None, "unknown")
    assert found["dtype"][:2] == (None, "passed")  # it has a default, but the mapping may name it
    assert shapes("dequantize_gemm/example_dequant_gemv_fp16xint4.py", "dequantize_gemv")["B"] == [1024, 512]


def test_random_sizes_stay_unknown() -> None:
    # max_seqlen_pad comes from torch.randint(...).max().item(): no value in the source.
    assert values("deepseek_mla/example_mla_decode_paged.py", "mla_decode_tilelang")["max_seqlen_pad"][0] is None
