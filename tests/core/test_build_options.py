"""The build is TileLang's: the jit decorator's options, the file's import set-up, one record per launch."""

from __future__ import annotations

from pathlib import Path

from tilescope.core.compiler.service import Analyzer

FIXTURES = Path(__file__).parent / "fixtures"


def test_pass_configs_of_the_decorator_are_honoured(analyzer: Analyzer) -> None:
    result = analyzer.analyze(str(FIXTURES / "jit_options.py"))
    assert not result.all_diagnostics(), result.all_diagnostics()
    plain, specialised = result.kernel("plain"), result.kernel("specialised")
    assert plain is not None and specialised is not None
    assert plain.pass_configs == {"tl.disable_warp_specialized": True} and plain.out_idx == [-1]
    # TileLang builds 128 threads with the accumulator from thread 0 when warp specialisation is off,
    # and a 128 + 128 producer/consumer split otherwise.
    assert plain.launch is not None and plain.launch.threads_after_ws == 128 and not plain.launch.thread_ranges
    assert plain.layout("C_l").thread_begin == 0  # type: ignore[union-attr]
    assert specialised.launch is not None and specialised.launch.threads_after_ws == 256
    assert [(r.role, r.begin, r.end) for r in specialised.launch.thread_ranges] == [
        ("producer", 0, 128),
        ("consumer", 128, 256),
    ]
    assert specialised.layout("C_l").thread_begin == 128  # type: ignore[union-attr]


def test_target_of_the_decorator_is_honoured(analyzer: Analyzer) -> None:
    ampere = analyzer.analyze(str(FIXTURES / "jit_options.py"), kernel="ampere").kernel("ampere")
    assert ampere is not None and ampere.target == "sm_80" and ampere.out_idx == [-1]
    # Ampere has no TMA producer warps: the sm_90 default would build 256 threads here.
    assert ampere.launch is not None and ampere.launch.threads_after_ws == 128


def test_one_launch_record_per_kernel_block_with_the_backend_default(analyzer: Analyzer) -> None:
    model = analyzer.analyze(str(FIXTURES / "jit_options.py"), kernel="two_launches").kernel()
    assert model is not None and not model.diagnostics
    launches = [(x.grid, x.threads, x.threads_given, x.span.line if x.span else None) for x in model.launches]
    assert launches == [([8], 128, False, 42), ([4], 256, True, 45)]
    assert model.launch == model.launches[0]


def test_files_inside_packages_import_relatively(analyzer: Analyzer) -> None:
    result = analyzer.analyze(str(FIXTURES / "packaged" / "kernels" / "copy.py"))
    model = result.kernel("copy")
    assert model is not None and not result.all_diagnostics(), result.all_diagnostics()
    assert model.launch is not None and (model.launch.grid, model.launch.threads) == ([16], 256)


def test_top_level_sys_path_changes_are_honoured(analyzer: Analyzer) -> None:
    result = analyzer.analyze(str(FIXTURES / "sys_path" / "app" / "kernel.py"))
    model = result.kernel("copy")
    assert model is not None and not result.all_diagnostics(), result.all_diagnostics()
    assert model.launch is not None and (model.launch.grid, model.launch.threads) == ([64], 64)
