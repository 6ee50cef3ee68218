"""The fake device: libraries whose tests and mains need a GPU (or an NPU) teach their kernels' sizes on a
machine without one; tensors are shape-only, device queries answer from the profile, a value no shape
holds stops the run at the program's line; ``record`` on a CPU records every instance the tests build."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tilescope.core.compiler.service import Analyzer
from tilescope.core.record import dry_run as dry_run_module
from tilescope.core.record.dry_run import dry_run

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "fake_device"
GPULIB = FIXTURES / "gpulib"
PACKAGE = GPULIB / "src" / "gpulib"
READ_BACK_LINE = 38
"""``peak = row_max(x).max().item()`` in ``stats.py``."""


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One cache for the module: the library's tests run once and teach every module of it."""
    folder = tmp_path_factory.mktemp("cache")
    saved = os.environ.get("TILESCOPE_CACHE_DIR")
    os.environ["TILESCOPE_CACHE_DIR"] = str(folder)
    yield folder
    if saved is None:
        del os.environ["TILESCOPE_CACHE_DIR"]
    else:
        os.environ["TILESCOPE_CACHE_DIR"] = saved


@pytest.fixture(scope="module")
def analyzer(cache: Path) -> Iterator[Analyzer]:
    with Analyzer(dry_run=True, timeout_s=300) as instance:
        yield instance


def test_every_kernel_a_librarys_tests_build_is_analysed_with_their_sizes(analyzer: Analyzer) -> None:
    """The tests make tensors on cuda, skip without ``is_available()``, read the device's properties and SM
    count, parametrize over sizes and size kernels from tensors' shapes; the editor analyses them all."""
    lines = (PACKAGE / "stats.py").read_text().splitlines()
    assert lines[READ_BACK_LINE - 1].strip().startswith("peak = row_max(x).max().item()")
    models = {}
    for module in ("ops", "norm", "stats"):
        for model in analyzer.analyze(str(PACKAGE / f"{module}.py")).kernels:
            models[model.kernel] = model
    expected = {
        "vector_add": ({"N": 4096}, "test_ops.py::test_add[4096]"),
        "scale_2d": ({"M": 128, "N": 64}, "test_ops.py::test_double_rows[128-64]"),
        "persistent_scale": ({"M": 1000, "N": 64, "num_sms": 132}, "test_norm.py::test_scaled_rows"),
        "row_max_kernel": ({"M": 64, "N": 512}, "test_stats.py::test_row_max"),
    }
    for name, (sizes, test) in expected.items():
        model = models[name]
        assert model.passes and not model.diagnostics, (name, model.diagnostics)
        assert {k: model.args[k] for k in sizes} == sizes, name
        assert {model.arg_sources[k] for k in sizes} == {f"dry run of {test}, fake H100"}, name
    assert models["persistent_scale"].launch is not None and models["persistent_scale"].launch.grid == [132]
    # Built only after the program reads a value back: not analysed, and the diagnostic says where and why.
    divide = models["divide"]
    assert not divide.passes
    [missing] = [d.message for d in divide.diagnostics if d.code == "missing-args"]
    assert "test_stats.py::test_normalise" in missing and "`.item()` needs a value of a tensor" in missing
    assert f"(at stats.py, line {READ_BACK_LINE})" in missing and "fake H100" in missing


def test_one_run_of_the_tests_serves_every_module_until_a_file_it_imported_changes(
    analyzer: Analyzer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cached by the content of every file of the program the run imported, not by the analysed file alone."""
    library = tmp_path / "gpulib"
    shutil.copytree(GPULIB, library)
    first = dry_run(str(library / "src" / "gpulib" / "ops.py"), python=sys.executable, memory_mb=6144)
    assert first is not None and first.instance("vector_add") is not None
    assert str((library / "tests" / "conftest.py").resolve()) in first.imported

    def must_not_run(*args: object) -> None:
        raise AssertionError("the tests ran again")

    monkeypatch.setattr(dry_run_module, "_run", must_not_run)
    norm = dry_run(str(library / "src" / "gpulib" / "norm.py"), python=sys.executable, memory_mb=6144)
    assert norm is not None and (norm.instance("persistent_scale") or {})["args"]["num_sms"] == 132
    (library / "README.md").write_text("not imported by the tests\n")
    assert dry_run(str(library / "src" / "gpulib" / "stats.py"), python=sys.executable, memory_mb=6144) is not None
    monkeypatch.undo()
    monkeypatch.setenv("TILESCOPE_CACHE_DIR", os.environ["TILESCOPE_CACHE_DIR"])
    test = library / "tests" / "test_ops.py"
    test.write_text(test.read_text().replace("[4096, 8192]", "[2048]"))
    changed = dry_run(str(library / "src" / "gpulib" / "ops.py"), python=sys.executable, memory_mb=6144)
    assert changed is not None and (changed.instance("vector_add") or {})["args"] == {"N": 2048}


def test_the_childs_gpu_is_hidden_and_the_fake_answers_come_from_the_profile(tmp_path: Path) -> None:
    program = tmp_path / "device_answers.py"
    shutil.copy(FIXTURES / "device_answers.py", program)
    answers = tmp_path / "answers.json"
    os.environ["DEVICE_ANSWERS"] = str(answers)
    try:
        run = dry_run(str(program), python=sys.executable, memory_mb=2048, target="sm_80")
        seen = json.loads(answers.read_text())
        assert seen["CUDA_VISIBLE_DEVICES"] == ""
        assert seen["available"] and seen["count"] == 1 and seen["name"] == "NVIDIA A100-SXM4-80GB"
        assert seen["capability"] == [8, 0] and seen["sms"] == 108 and seen["total"] == 80 * 2**30
        assert seen["huge"] == [[1 << 20, 1 << 20], "cuda:0", True]  # 4 TiB under a 2 GiB limit: shape only
        assert seen["elapsed"] == 1.0
        assert run is not None and run.stop is not None
        assert run.stop.startswith("ShapeOnly: `.item()` needs a value of a tensor the fake A100-SXM4-80GB")
        line = 1 + program.read_text().splitlines().index("    print(huge.sum().item())")
        assert run.stop.endswith(f"(at device_answers.py, line {line})")
        # A GPU a recording saw outranks the target's usual part.
        (tmp_path / ".tilescope").mkdir()
        device = {"name": "NVIDIA GeForce RTX 4090", "major": 8, "minor": 9, "multi_processor_count": 128}
        entry = {"file": "other.py", "kernel": "k", "args": {}, "device": device}
        (tmp_path / ".tilescope" / "instances.json").write_text(json.dumps({"version": 1, "instances": [entry]}))
        program.write_text(program.read_text() + "\n")
        dry_run(str(program), python=sys.executable, memory_mb=2048, target="sm_80")
        seen = json.loads(answers.read_text())
        assert (seen["name"], seen["capability"], seen["sms"]) == ("NVIDIA GeForce RTX 4090", [8, 9], 128)
    finally:
        del os.environ["DEVICE_ANSWERS"]


def test_a_training_step_teaches_the_sizes_of_its_forward_backward_and_configured_kernels(analyzer: Analyzer) -> None:
    """An eager kernel whose shapes go through a variable (TileLang's own ``T.const`` reading is recorded), a
    custom ``autograd.Function`` whose backward builds a kernel (``loss.backward()`` of a shape-only loss
    over a leaf kept on the CPU), a CUDA generator, ``arange`` over read-back lengths, ``x.to(other)``,
    ``randperm`` into a kept tensor, and ``kernel(M, N, **config)``, whose unnamed values only the run knows
    (the parameters' defaults would be a guess: the fake H100's capability picks others)."""
    path = FIXTURES / "training" / "attention.py"
    models = {model.kernel: model for model in analyzer.analyze(str(path)).kernels}
    expected = {
        "attention_fwd": ({"batch": 2, "seq_len": 256, "heads": 4, "dim": 64, "block_M": 32}, "forward", 53),
        "attention_bwd": ({"batch": 2, "seq_len": 256, "heads": 4, "dim": 64, "block_M": 64}, "backward", 59),
        "scale_rows": ({"M": 512, "N": 256, "block_M": 64, "threads": 256}, "main", 80),
    }
    for name, (sizes, function, line) in expected.items():
        model = models[name]
        assert model.passes and not [d for d in model.diagnostics if d.severity != "information"], name
        assert {k: model.args[k] for k in sizes} == sizes, (name, model.args)
        taught = {k: v for k, v in model.arg_sources.items() if k != "block_M" or name == "scale_rows"}
        assert set(taught.values()) == {f"dry run of {function}(), line {line}, fake H100"}, (name, taught)


def test_an_autotuned_kernel_built_with_the_devices_heuristic_is_analysed_as_built(analyzer: Analyzer) -> None:
    """``rows(M, N, **heuristic())`` passes every tunable: TileLang tunes nothing, and the analysis is of the
    configuration the fake H100's capability picked, not of the decorator's first."""
    [model] = analyzer.analyze(str(FIXTURES / "training" / "tuned.py")).kernels
    assert model.passes, model.diagnostics
    assert {k: model.args[k] for k in ("M", "N", "block_M", "threads")} == {
        "M": 1024,
        "N": 128,
        "block_M": 64,
        "threads": 256,
    }
    assert model.arg_sources["block_M"] == "dry run of the module, line 33, fake H100"
    assert model.autotune is not None and model.autotune.chosen_by == "call"


def test_a_triton_kernel_before_a_tilelang_one_stands_in_on_the_fake_device(analyzer: Analyzer) -> None:
    """Triton's launcher needs ``libcuda`` and a device: on the fake one a launch does nothing, as a compiled
    TileLang kernel does, and the program goes on to the kernel whose sizes it teaches."""
    pytest.importorskip("triton", reason="the analysing interpreter has no Triton")
    [model] = analyzer.analyze(str(FIXTURES / "training" / "triton_prep.py")).kernels
    assert model.passes, model.diagnostics
    assert {k: model.args[k] for k in ("M", "N")} == {"M": 2048, "N": 512}
    assert model.arg_sources["M"] == "dry run of main(), line 35, fake H100"


def test_a_program_for_an_npu_is_analysed_on_a_fake_ascend(analyzer: Analyzer) -> None:
    [model] = analyzer.analyze(str(FIXTURES / "npu" / "ascend_rows.py")).kernels
    assert model.passes, model.diagnostics
    assert {k: model.args[k] for k in ("M", "N", "cores")} == {"M": 960, "N": 128, "cores": 24}
    assert model.arg_sources["cores"] == "dry run of main(), line 26, fake 910B"


def test_record_on_a_cpu_records_every_instance_the_tests_build(tmp_path: Path) -> None:
    library = tmp_path / "gpulib"
    shutil.copytree(GPULIB, library)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "tilescope",
            "record",
            "--",
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
        ],
        cwd=library,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert "no GPU here: ran on a fake NVIDIA H100 80GB HBM3" in done.stdout, done.stdout + done.stderr[-3000:]
    assert "tests/test_stats.py::test_normalise failed: ShapeOnly: `.item()`" in done.stdout
    assert f"stats.py, line {READ_BACK_LINE})" in done.stdout
    entries = json.loads((library / ".tilescope" / "instances.json").read_text())["instances"]
    built = sorted((e["kernel"], json.dumps(e["args"], sort_keys=True), e["test"]) for e in entries)
    assert built == [
        ("persistent_scale", '{"M": 1000, "N": 64, "num_sms": 132}', "tests/test_norm.py::test_scaled_rows"),
        ("row_max_kernel", '{"M": 32, "N": 256}', "tests/test_stats.py::test_normalise"),
        ("row_max_kernel", '{"M": 64, "N": 512}', "tests/test_stats.py::test_row_max"),
        ("scale_2d", '{"M": 128, "N": 64}', "tests/test_ops.py::test_double_rows[128-64]"),
        ("scale_2d", '{"M": 256, "N": 32}', "tests/test_ops.py::test_double_rows[256-32]"),
        ("vector_add", '{"N": 4096}', "tests/test_ops.py::test_add[4096]"),
        ("vector_add", '{"N": 8192}', "tests/test_ops.py::test_add[8192]"),
    ]
    assert {e["fake_device"] for e in entries} == {"H100"} and all(e["device"] is None for e in entries)
