"""How many kernels of TileLang's autotuned examples Tilescope analyses, without running the autotuner.

Files of ``../shared/corpus/tilelang-examples`` that use ``@autotune`` / ``@tilelang.autotune`` or
``AutoTuner``: each is analysed by the compiler tier for sm_90 in one warm worker (first config that
fits, or the file's own call values), and each discovered kernel is counted as lowered (passes ran,
no error), with or without its autotune configs read. Failures are grouped by their first error.

    [TILESCOPE_CORPUS=DIR] python benchmarks/bench_autotune_corpus.py [--json results.json]
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tilescope.core.compiler.service import Analyzer  # noqa: E402

CORPUS = Path(os.environ.get("TILESCOPE_CORPUS", ROOT.parent / "shared" / "corpus" / "tilelang-examples"))
"""``../shared`` beside the repository root; ``TILESCOPE_CORPUS`` points elsewhere (a worktree)."""
USES_AUTOTUNE = re.compile(r"@(?:tilelang\.|tl\.)?autotune\b|\bAutoTuner\b")


def autotuned_files() -> list[Path]:
    files = sorted(CORPUS.rglob("*.py"))
    return [f for f in files if USES_AUTOTUNE.search(f.read_text(errors="replace"))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--json", type=Path, help="write per-kernel results here")
    options = parser.parse_args()
    if not CORPUS.is_dir():
        raise SystemExit(f"no corpus at {CORPUS}")
    files = autotuned_files()
    rows = []
    start = time.perf_counter()
    with Analyzer(timeout_s=120) as analyzer:
        for path in files:
            result = analyzer.analyze(str(path))
            models = {k.kernel: k for k in result.kernels}
            for ref in result.discovered:
                k = models.get(ref.name)
                errors = [d for d in (k.diagnostics if k else result.diagnostics) if d.severity == "error"]
                lowered = bool(k and k.passes and not errors)
                rows.append(
                    {
                        "file": str(path.relative_to(CORPUS)),
                        "kernel": ref.name,
                        "lowered": lowered,
                        "autotune": k.autotune.summary if k and k.autotune else None,
                        "chosen_by": k.autotune.chosen_by if k and k.autotune else None,
                        "error": None if lowered else (errors[0].message[:160] if errors else "not analysed"),
                    }
                )
            if not result.discovered:
                rows.append(
                    {
                        "file": str(path.relative_to(CORPUS)),
                        "kernel": None,
                        "lowered": False,
                        "autotune": None,
                        "chosen_by": None,
                        "error": "no kernels discovered",
                    }
                )
    elapsed = time.perf_counter() - start
    kernels = [r for r in rows if r["kernel"]]
    lowered = [r for r in kernels if r["lowered"]]
    tuned = [r for r in kernels if r["autotune"]]
    print(f"{len(files)} files using autotune, {len(kernels)} kernels discovered, in {elapsed:.0f} s")
    print(
        f"  lowered: {len(lowered)}/{len(kernels)}; autotune configs read: {len(tuned)} kernels "
        f"({sum(r['lowered'] for r in tuned)} of them lowered)"
    )
    print(
        "  chosen by: " + ", ".join(f"{k} {v}" for k, v in collections.Counter(r["chosen_by"] for r in tuned).items())
    )
    causes = collections.Counter(re.sub(r"'[^']*'", "'…'", r["error"])[:110] for r in rows if not r["lowered"])
    for cause, count in causes.most_common():
        print(f"  {count:3d} × {cause}")
    if options.json:
        options.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
