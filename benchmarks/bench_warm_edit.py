"""A warm edit, phase by phase: what the compiler tier spends after an edit to one kernel of a file.

For each file (the bundled GEMM, corpus kernels: flash attention forward, a dequantize GEMM, the Ascend
corpus's GEMM, which has no hazard check), on a warm ``Analyzer``, each round edits the text (a new
comment: no cache answers) and analyses its first kernel as the editor asks for it (the model sent ahead
of the hazard check); the phases are discovery (in the host), then what the worker's child reports (fork
and load, build, lowering, extraction, the rest of the model: ptxas, bank conflicts, occupancy, roofline;
hazard check) and the rest (the request to the worker, serialisation and the answer back). Prints each
phase's median, p95 and share of the total, with the load average; the time to the first findings (the
model sent ahead, which the editor publishes); and the total over the kernel's own lowering plus hazard
check (the compiler's own work) in the same rounds.

    .venv/bin/python benchmarks/bench_warm_edit.py [--rounds 5] [FILES...]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

from tilescope.core.compiler.discovery import instantiations
from tilescope.core.compiler.service import Analyzer

ROOT = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("TILESCOPE_CORPUS", ROOT / ".." / "shared" / "corpus" / "tilelang-examples")) / "examples"
ASCEND = Path(os.environ.get("TILESCOPE_ASCEND_CORPUS", ROOT / ".." / "shared" / "corpus" / "tilelang-ascend-examples"))
FILES = [
    ROOT / "examples" / "gemm.py",
    CORPUS / "flash_attention" / "example_mha_fwd_bshd.py",
    CORPUS / "dequantize_gemm" / "example_dequant_gemm_fine_grained.py",
    ASCEND / "examples" / "ascend" / "example_gemm.py",
]
CHILD = {
    "loaded": "fork + load",
    "built": "build",
    "lowered": "lowering",
    "extracted": "extraction",
    "modelled": "rest of the model",
    "checked": "hazard check",
}
CHILD_PHASES = list(CHILD.values())


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def one_edit(analyzer: Analyzer, path: Path, text: str, kernel: str) -> dict[str, float]:
    started = time.monotonic()
    instantiations(text, str(path))  # what ``analyze`` does first, timed alone
    discovery = time.monotonic() - started
    heard: list[float] = []
    started = time.monotonic()
    analyzer.analyze(str(path), text, kernel=kernel, on_partial=lambda _: heard.append(time.monotonic()))
    total = time.monotonic() - started
    phases = {"discovery": discovery}
    last = 0.0
    for name, at in analyzer.phases:
        label = CHILD.get(name, name)
        phases[label] = phases.get(label, 0.0) + at - last
        last = at
    phases["request, reply, serialisation"] = total - discovery - last
    phases["total"] = total
    phases["first findings"] = (heard[0] if heard else time.monotonic()) - started
    return phases


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("files", nargs="*", type=Path, default=[f for f in FILES if f.exists()])
    options = parser.parse_args()
    with Analyzer(timeout_s=120) as analyzer:
        analyzer.warm()
        for path in options.files:
            source = path.read_text()
            found = instantiations(source, str(path))
            if not found:
                print(f"{path.name}: no kernels")
                continue
            kernel = found[0].kernel.name
            analyzer.analyze(str(path), source, kernel=kernel)  # this file's imports once
            rounds = [one_edit(analyzer, path, source + f"\n# edit {i}\n", kernel) for i in range(options.rounds)]
            total = statistics.median(r["total"] for r in rounds)
            print(f"{path.name} ({kernel}), {options.rounds} edits, load average {os.getloadavg()[0]:.1f}:")
            names = ["discovery", *CHILD_PHASES, "request, reply, serialisation", "total"]
            for name in names:
                values = [r.get(name, 0.0) for r in rounds]
                share = statistics.median(values) / total if total else 0.0
                print(
                    f"  {name:>30}: median {statistics.median(values):6.3f} s  p95 {p95(values):6.3f} s  {share:5.0%}"
                )
            first = [r["first findings"] for r in rounds]
            print(f"  {'first findings':>30}: median {statistics.median(first):6.3f} s  p95 {p95(first):6.3f} s")
            own = statistics.median(r.get("lowering", 0.0) + r.get("hazard check", 0.0) for r in rounds)
            print(f"  {'total / (lowering + hazard check)':>30}: {total / own:.2f}x" if own else "")


if __name__ == "__main__":
    main()
