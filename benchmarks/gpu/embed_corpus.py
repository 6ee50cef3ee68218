"""Copy the TileLang examples the H200 run measures into ``benchmarks/gpu/kernels`` (MIT, Tile-AI).

The GPU machine receives the repository alone, not the corpus beside it, so the few files the
bank-conflict and occupancy comparison measures travel as copies, each headed by where it came
from and which of its kernels are measured (``# KERNELS: [...]``, read by ``slow_compare.py``).

    python benchmarks/gpu/embed_corpus.py      # from the repository root, with ../shared beside it
"""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT.parent / "shared" / "corpus" / "tilelang-examples" / "examples"
CHOSEN = {
    "gemm/example_gemm_intrinsics.py": ["tl_matmul"],
    "flash_attention/example_mha_fwd_bhsd.py": ["flashattn"],
    "flash_decoding/example_mha_inference.py": ["flashattn"],
    "gemm_splitk/example_tilelang_gemm_splitk.py": ["matmul"],
    "gemv/example_gemv.py": [
        "naive_gemv",
        "naive_splitk_gemv",
        "splitk_gemv",
        "splitk_gemv_vectorized",
        "splitk_gemv_vectorized_tvm",
        "gemv_alloc_reducer",
    ],
    "linear_attention/example_retention_fwd.py": ["chunk_retention_fwd_kernel"],
    "norm/layernorm.py": ["_layernorm_fwd", "_layernorm_bwd"],
}


def main() -> None:
    out = Path(__file__).resolve().parent / "kernels"
    out.mkdir(exist_ok=True)
    for relative, kernels in CHOSEN.items():
        text = (CORPUS / relative).read_text()
        header = f"# From TileLang's examples/{relative} (MIT licence, Copyright (c) Tile-AI), copied unchanged.\n"
        header += f"# KERNELS: {json.dumps(kernels)}\n"
        (out / relative.replace("/", "__")).write_text(header + text)
        print(f"{relative}: {', '.join(kernels)}")


if __name__ == "__main__":
    main()
