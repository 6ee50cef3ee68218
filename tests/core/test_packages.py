"""Files of a kernel library load as ``import mylib.sub`` loads them, whichever files the worker saw first."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from tilescope.core.worker.import_path import MODULE_NAME, module_name

FIXTURES = Path(__file__).parent / "fixtures"
SRC = FIXTURES / "kernel_lib" / "src"
MODULES = {
    "mylib/ops/gemm.py": "matmul",
    "mylib/ops/reduce.py": "row_sum",
    "mylib/contrib/transpose.py": "transpose",
    "mylib/__init__.py": "matmul",
    "mylib/ops/cast.py": "cast",
    "mylib/ops/__init__.py": "row_sum",
    "mylib/ops/persistent.py": "persistent_copy",
}
_LOAD_IN_ORDER = """\
import json, sys
from tilescope.core.worker.loader import load_module
out = []
for path, name in json.loads(sys.argv[1]):
    try:
        namespace = load_module(open(path).read(), path)
        out.append([path, name in namespace and callable(namespace[name])])
    except Exception as err:
        out.append([path, f"{type(err).__name__}: {err}"])
print(json.dumps(out))
"""


def _load(order: list[str]) -> list[list[object]]:
    files = [[str(SRC / rel), MODULES[rel]] for rel in order]
    done = subprocess.run(
        [sys.executable, "-c", _LOAD_IN_ORDER, json.dumps(files)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd="/",
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("order", [list(MODULES), list(reversed(MODULES))], ids=["forward", "reversed"])
def test_every_module_of_the_library_loads_whatever_was_loaded_before(order: list[str]) -> None:
    # Each module's own "from mylib.config import ..." re-enters mylib/__init__.py, which imports every
    # kernel module: with the module half-loaded under its name, that import failed.
    results = _load(order)
    assert [r for r in results if r[1] is not True] == []


def test_the_same_files_import_cleanly_with_python() -> None:
    for rel in MODULES:
        dotted = rel.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
        done = subprocess.run([sys.executable, "-c", f"import {dotted}"], cwd=SRC, capture_output=True, timeout=300)
        assert done.returncode == 0, (rel, done.stderr[-2000:])


def test_names_are_the_ones_import_uses() -> None:
    assert module_name(str(SRC / "mylib" / "ops" / "gemm.py")) == ("mylib.ops.gemm", "mylib.ops", str(SRC))
    assert module_name(str(SRC / "mylib" / "__init__.py")) == ("mylib", "mylib", str(SRC))
    # A namespace portion of a regular package, told by the file's own relative import.
    transpose = SRC / "mylib" / "contrib" / "transpose.py"
    tree = __import__("ast").parse(transpose.read_text())
    assert module_name(str(transpose), tree) == ("mylib.contrib.transpose", "mylib.contrib", str(SRC))
    # A script beside the tests' own packages stays a script: its folder goes on sys.path.
    script = FIXTURES / "gpu_query.py"
    tree = __import__("ast").parse(script.read_text())
    assert module_name(str(script), tree) == (MODULE_NAME, None, str(FIXTURES))


def test_a_pure_namespace_package_with_relative_imports_loads(tmp_path: Path) -> None:
    package = tmp_path / "nslib" / "kernels"
    package.mkdir(parents=True)
    (tmp_path / "nslib" / "sizes.py").write_text("BLOCK = 128\n")
    kernel = package / "copy.py"
    kernel.write_text("from ..sizes import BLOCK\n\ndef copy(N=BLOCK * 4):\n    return N\n")
    tree = __import__("ast").parse(kernel.read_text())
    assert module_name(str(kernel), tree) == ("nslib.kernels.copy", "nslib.kernels", str(tmp_path))
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from tilescope.core.worker.loader import load_module; "
            f"p = {str(kernel)!r}; print(load_module(open(p).read(), p)['copy']())",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.stdout.strip().splitlines()[-1:] == ["512"], done.stderr[-2000:]
