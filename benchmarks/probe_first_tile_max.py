"""Why ``16/wrong/first_tile_max.py`` fails on the GPU at case ``blocks`` but in the interpreter only at ``large``.

For each case, the count of non-finite outputs four ways: the kernel as the grader compiles it, the
same kernel with warp specialisation off and with TMA lowering off (TileLang pass configs), the
tile interpreter, and a torch emulation of what the program says (the first key tile's maximum, P
cast to fp16 before the P·V product). Where the GPU alone is non-finite, the compiled kernel does not
do what the program says; the position of the Q copy's barrier wait against the first wgmma in the
generated source shows where.

    python benchmarks/probe_first_tile_max.py --out probe.json     # on a CUDA machine
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

import torch


def _emulate(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, block_n: int = 64) -> torch.Tensor:
    qf, kf, vf = (t.float().transpose(1, 2) for t in (q, k, v))
    scale = (1.0 / q.shape[-1]) ** 0.5 * math.log2(math.e)
    s = qf @ kf.transpose(-1, -2)
    m = s[..., :block_n].max(-1, keepdim=True).values
    p = torch.exp2(s * scale - m * scale)
    out = (p.half().float() @ vf) / p.sum(-1, keepdim=True)
    return out.transpose(1, 2).half()


def _source_order(kernel: Any) -> dict[str, int]:
    src = kernel.get_kernel_source()
    return {
        "first_wgmma": src.find("wgmma"),
        "q_tma_load": src.find("tma_load(Q_desc"),
        "first_barrier_wait": src.find(".wait("),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    import tilelang
    from tilescope.core.interpret import compile_kernel
    from tilescope.puzzles import catalog, runner
    from tilescope.puzzles.cases import plan

    p = catalog.get(16)
    path = str(p.folder / "wrong" / "first_tile_max.py")
    source = Path(path).read_text()
    ref = p.reference()
    rows = []
    for case in plan(p, 1, timed=False):
        if case.name not in ("blocks", "large", "ragged"):
            continue
        func = runner.build(path, source, case.args)
        gen = torch.Generator().manual_seed(case.data_seed)
        q, k, v = ref.inputs(case.args, gen, case.values, "cpu")
        row: dict[str, Any] = {"case": case.name, "seed": case.seed, "values": case.values}
        for name, configs in (
            ("gpu", None),
            ("gpu_no_warp_specialization", {"tl.disable_warp_specialized": True}),
            ("gpu_no_tma", {"tl.disable_tma_lower": True}),
        ):
            kernel = tilelang.compile(func, target="cuda", pass_configs=configs)
            out = torch.full_like(q, float("nan"), device="cuda")
            kernel(q.cuda(), k.cuda(), v.cuda(), out)
            torch.cuda.synchronize()
            row[name] = int((~torch.isfinite(out)).sum())
            if configs is None:
                row["source"] = _source_order(kernel)
        out = torch.full_like(q, float("nan"))
        compile_kernel(func, path)(q, k, v, out, outputs={"Output"})
        row["interpreter"] = int((~torch.isfinite(out)).sum())
        row["emulated"] = int((~torch.isfinite(_emulate(q, k, v))).sum())
        print(json.dumps(row), flush=True)
        rows.append(row)
    args.out.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
