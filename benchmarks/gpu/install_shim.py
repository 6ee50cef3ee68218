"""Make this checkout importable as the installed ``tilescope`` without pip (the GPU machine has no network).

Links the top-level folders into this checkout's own ``tilescope/`` package (``tilescope/core`` →
``tilelang_core``, ..., from ``pyproject.toml``'s package map), so ``tilescope.core`` imports from
the repository root too (where ``python -m`` and pytest put the checkout first on ``sys.path``),
and writes ``DEST/tilescope`` the same way with a ``tilescope`` dist-info holding its entry points,
which the ``tilescope`` command's dispatcher reads. Only for a copy of the tree (the GPU machine's).

    python benchmarks/gpu/install_shim.py /tmp/ts && export PYTHONPATH=/tmp/ts:$PYTHONPATH
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[2]


def main(dest: Path) -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    package_dir = project["tool"]["setuptools"]["package-dir"]
    root = dest / "tilescope"
    shutil.rmtree(dest, ignore_errors=True)
    root.mkdir(parents=True)
    for item in (ROOT / package_dir["tilescope"]).glob("*.py"):
        shutil.copy(item, root / item.name)
    for name, folder in package_dir.items():
        if name != "tilescope":
            (root / name.removeprefix("tilescope.")).symlink_to(ROOT / folder)
            inside = ROOT / package_dir["tilescope"] / name.removeprefix("tilescope.")
            if not inside.exists():
                inside.symlink_to(ROOT / folder)
    info = dest / f"tilescope-{project['project']['version']}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: tilescope\nVersion: {project['project']['version']}\n"
    )
    lines = []
    for group, entries in project["project"].get("entry-points", {}).items():
        lines.append(f"[{group}]")
        lines += [f"{key} = {value}" for key, value in entries.items()]
    lines.append("[console_scripts]")
    lines += [f"{key} = {value}" for key, value in project["project"].get("scripts", {}).items()]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
