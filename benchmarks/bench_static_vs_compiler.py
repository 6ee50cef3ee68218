"""Where the compiler tier analyses a corpus kernel, does the static tier say the same?

For each kernel both tiers describe, compares every buffer's shape, dtype and scope, and puts the
static shared-memory figure (TileLang's own layout of the arena, ``static/shared_plan.py``), the
certain lower bound (the figure behind the ``shared-memory`` warning) and the plain sum of
allocations beside the compiler's shared memory. Prints the agreement and every disagreement.
Runs the real compiler in the core's worker (no GPU is touched). Run:

    python benchmarks/bench_static_vs_compiler.py [--files 40] [--start 0]   # TILESCOPE_CORPUS=DIR
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tilescope.core.compiler.service import Analyzer
from tilescope.core.static import analyze_source

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_corpus import CORPUS, corpus_files


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=40)
    parser.add_argument("--start", type=int, default=0)
    args = parser.parse_args()
    files = [p for p in corpus_files() if "T.Kernel" in p.read_text()][args.start : args.start + args.files]
    agree = total = kernels = 0
    bounds_ok = bounds = 0
    planned_ok = planned = unplanned = 0
    planned_wrong: list[str] = []
    wrong: list[str] = []
    with Analyzer(timeout_s=120) as analyzer:
        for path in files:
            static = analyze_source(path.read_text(), str(path))
            compiled = analyzer.analyze(str(path))
            models = {m.kernel: m for m in compiled.kernels}
            for kernel in static.kernels:
                model = models.get(kernel.ref.name)
                if model is None or not model.buffers:
                    continue
                kernels += 1
                confirmed = {b.name: (b.shape, b.dtype, b.scope) for b in model.buffers}
                for decl in kernel.buffers:
                    if decl.buffer.name not in confirmed:
                        continue
                    total += 1
                    said = (decl.buffer.shape, decl.buffer.dtype, decl.buffer.scope)
                    if said == confirmed[decl.buffer.name]:
                        agree += 1
                    else:
                        wrong.append(
                            f"{path.relative_to(CORPUS)} {kernel.ref.name}.{decl.buffer.name}: "
                            f"static {said} compiler {confirmed[decl.buffer.name]}"
                        )
                bound = kernel.shared_floor.bytes if kernel.shared_floor else None
                print(
                    f"{path.relative_to(CORPUS)} {kernel.ref.name}: shared compiler {model.shared_bytes} "
                    f"static {kernel.shared_planned} sum {kernel.shared_bytes} lower bound {bound}",
                    flush=True,
                )
                if model.shared_bytes:
                    if kernel.shared_planned is None:
                        unplanned += 1
                    else:
                        planned += 1
                        planned_ok += kernel.shared_planned == model.shared_bytes
                        if kernel.shared_planned != model.shared_bytes:
                            planned_wrong.append(
                                f"{path.relative_to(CORPUS)} {kernel.ref.name}: static {kernel.shared_planned} "
                                f"compiler {model.shared_bytes}"
                            )
                if bound is not None and model.shared_bytes:
                    bounds += 1
                    bounds_ok += bound <= model.shared_bytes
    print(f"kernels compared {kernels}; buffers agreeing {agree}/{total} ({100 * agree / max(total, 1):.1f} %)")
    print(f"static lower bound <= compiler shared memory for {bounds_ok}/{bounds} kernels")
    print(
        f"static shared memory == compiler's for {planned_ok}/{planned} kernels with shared memory "
        f"({unplanned} more where the static tier gives no exact figure)"
    )
    for line in planned_wrong:
        print("  shared memory differs: " + line)
    for line in wrong:
        print("  " + line)


if __name__ == "__main__":
    main()
