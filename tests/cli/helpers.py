"""Helpers for running ``tilescope`` as a user does: a separate process, from a chosen folder."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT

EXAMPLES = ROOT / "examples"
CORPUS = Path(os.environ.get("TILESCOPE_CORPUS", ROOT.parent / "shared" / "corpus" / "tilelang-examples")).resolve()


def tilescope(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "NO_COLOR")}
    return subprocess.run(
        [sys.executable, "-m", "tilescope", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        cwd=cwd,
        env={**environment, **(env or {})},
    )
