"""``tilescope record`` on real runs: three of TileLang's examples, recorded, then checked with what was recorded.

On a GPU machine each example runs to the end, so every kernel it builds is recorded; without
one, each stops at its first device call. The examples are copied into a scratch workspace (the
corpus is left untouched); the instances file and each ``tilescope check --format json`` go to
``OUT`` (default ``$OUT`` or ``./record-examples``).

    TILESCOPE_CORPUS=.../tilelang-examples python benchmarks/record_examples.py [OUT]
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path(os.environ.get("TILESCOPE_CORPUS", ROOT / ".." / "shared" / "corpus" / "tilelang-examples"))
EXAMPLES = [
    "gemm/example_gemm.py",
    "elementwise/example_elementwise_add.py",
    "gemm_splitk/example_tilelang_gemm_splitk.py",
]


def main() -> None:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("OUT", "record-examples")).resolve()
    workspace = out / "workspace"
    workspace.mkdir(parents=True, exist_ok=True)
    corpus = CORPUS.resolve() / "examples"
    for example in EXAMPLES:
        shutil.copy(corpus / example, workspace / Path(example).name)
        name = Path(example).name
        print(f"$ tilescope record -- python {name}", flush=True)
        recorded = subprocess.run(
            [sys.executable, "-m", "tilescope", "record", "--", sys.executable, name],
            cwd=workspace,
            capture_output=True,
            text=True,
            check=False,
        )
        print("\n".join(line for line in recorded.stdout.splitlines() if line.startswith("tilescope record")))
        checked = subprocess.run(
            [sys.executable, "-m", "tilescope", "check", name, "--format", "json"],
            cwd=workspace,
            capture_output=True,
            text=True,
            check=False,
        )
        (out / f"{Path(name).stem}.check.json").write_text(checked.stdout)
        files = json.loads(checked.stdout or '{"files": []}')["files"]
        for kernel in files[0]["kernels"] if files else []:
            sources = sorted(set(kernel.get("arg_sources", {}).values()))
            launch = kernel["launch"] or {}
            print(
                f"  check: {kernel['kernel']}({', '.join(f'{k}={v}' for k, v in kernel['args'].items())}) "
                f"from {'/'.join(sources)}; grid {launch.get('grid')} × {launch.get('threads_after_ws')} threads"
            )
    shutil.copy(workspace / ".tilescope" / "instances.json", out / "instances.json")
    print(f"instances: {out / 'instances.json'}")


if __name__ == "__main__":
    main()
