"""The dry run: sizes only the program's own run gives, learned by running it with stand-in kernels,
supervised and limited, cached by the file's hash in instances.json's schema; off when asked."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from tilescope.core.compiler.service import Analyzer
from tilescope.core.record import dry_run as dry_run_module
from tilescope.core.record.dry_run import dry_run
from tilescope.core.record.dry_run_result import cache_dir

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "dry_run"
SIZES = FIXTURES / "sizes_from_run.py"
KERNEL_LIB = FIXTURES.parent / "kernel_lib"
MAIN_CALL_LINE = 26
"""``kernel = scale(a.shape[0], a.shape[1])`` in ``main()``."""


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TILESCOPE_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _kernel(path: Path, dry: bool = True):
    with Analyzer(dry_run=dry) as analyzer:
        analysis = analyzer.analyze(str(path))
    assert len(analysis.kernels) == 1, analysis
    return analysis.kernels[0]


def test_sizes_the_source_does_not_give_come_from_a_dry_run_of_main(tmp_path: Path) -> None:
    assert SIZES.read_text().splitlines()[MAIN_CALL_LINE - 1].strip() == "kernel = scale(a.shape[0], a.shape[1])"
    model = _kernel(SIZES)
    assert model.passes and not model.diagnostics
    assert {k: model.args[k] for k in ("M", "N")} == {"M": 384, "N": 256}
    assert model.arg_sources["M"] == model.arg_sources["N"] == f"dry run of main(), line {MAIN_CALL_LINE}, fake H100"
    assert {b.name: b.shape for b in model.buffers if b.scope == "global"} == {"A": [384, 256], "B": [384, 256]}


def test_check_dry_runs_by_default_and_not_with_no_dry_run() -> None:
    def check(*extra: str) -> dict:
        done = subprocess.run(
            [sys.executable, "-m", "tilescope", "check", str(SIZES), "--format", "json", *extra],
            capture_output=True,
            text=True,
            check=False,
        )
        return json.loads(done.stdout)["files"][0]["kernels"][0]

    off = check("--no-dry-run")
    assert not off["passes"] and [d["code"] for d in off["diagnostics"]] == ["missing-args"]
    assert not (cache_dir() / "dry-run").exists()
    on = check()
    assert on["passes"] and on["arg_sources"]["M"] == f"dry run of main(), line {MAIN_CALL_LINE}, fake H100"


def test_a_dry_run_is_cached_by_the_files_hash_in_the_instances_schema(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy = tmp_path / "sizes.py"
    shutil.copy(SIZES, copy)
    first = dry_run(str(copy), python=_python(), memory_mb=6144)
    assert first is not None and first.stop is None
    [stored] = list((cache_dir() / "dry-run").glob("*.json"))
    data = json.loads(stored.read_text())
    assert data["version"] == 1 and data["dry_run"]["command"] == "python -O sizes.py"
    [entry] = data["instances"]
    assert (entry["file"], entry["kernel"], entry["args"]) == (str(copy.resolve()), "scale", {"M": 384, "N": 256})
    assert entry["called_at"] == {"file": str(copy.resolve()), "function": "main", "line": MAIN_CALL_LINE}

    def must_not_run(*args: object) -> None:
        raise AssertionError("an unchanged file ran again")

    monkeypatch.setattr(dry_run_module, "_run", must_not_run)
    again = dry_run(str(copy), python=_python(), memory_mb=6144)
    assert again is not None and (again.instance("scale") or {})["args"] == (first.instance("scale") or {})["args"]
    monkeypatch.undo()
    monkeypatch.setenv("TILESCOPE_CACHE_DIR", str(stored.parent.parent))
    copy.write_text(copy.read_text().replace("default=256", "default=128"))
    changed = dry_run(str(copy), python=_python(), memory_mb=6144)
    assert changed is not None and (changed.instance("scale") or {}).get("args") == {"M": 384, "N": 128}


def test_a_library_module_without_main_is_run_through_the_test_that_imports_it() -> None:
    model = _kernel(FIXTURES / "library" / "tilekit" / "rows.py")
    assert model.passes and {k: model.args[k] for k in ("M", "N")} == {"M": 96, "N": 48}
    assert model.arg_sources["M"] == "dry run of test_rows.py::test_row_sum, fake H100"


def test_a_run_that_never_ends_is_stopped_and_the_kernel_says_why(tmp_path: Path) -> None:
    looping = tmp_path / "looping.py"
    looping.write_text(SIZES.read_text().replace("    main(parser.parse_args())", "    while True:\n        pass"))
    run = dry_run(str(looping), python=_python(), memory_mb=6144, wall_s=3)
    assert run is not None and run.stop == "timeout" and not run.instances
    assert run.why_not("scale") == "a dry run (python -O looping.py) did not build it: it stopped early (timeout)"


def test_a_run_is_held_to_the_memory_limit(tmp_path: Path) -> None:
    greedy = tmp_path / "greedy.py"
    greedy.write_text('if __name__ == "__main__":\n    hoard = bytearray(64 * 2**30)\n')
    run = dry_run(str(greedy), python=_python(), memory_mb=2048, wall_s=30)
    assert run is not None and run.stop is not None and run.stop.startswith("MemoryError")


def _python() -> str:
    return sys.executable


def test_a_package_module_is_run_through_the_program_that_imports_its_package() -> None:
    """``mylib/ops/gemm.py`` has no ``__main__`` and no test; ``python -m mylib.bench`` builds it (``from mylib
    import matmul``) with argparse sizes through ``main(args)`` and a config dataclass and an enum."""
    model = _kernel(KERNEL_LIB / "src" / "mylib" / "ops" / "gemm.py")
    assert model.passes, model.diagnostics
    assert {k: model.args[k] for k in ("M", "N", "K")} == {"M": 1024, "N": 512, "K": 256}
    assert str(model.args["cfg"]).startswith("GemmConfig(block_M=64") and str(model.args["epilogue"]) == "Epilogue.RELU"
    assert model.arg_sources["M"] == model.arg_sources["cfg"] == "dry run of main() in bench.py, line 36, fake H100"
